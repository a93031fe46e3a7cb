"""The ``--version`` line of every command-line tool; reads the library's build record, imports no TensorFlow."""

from npu_bridge.core.runtime import native_library

# npu_bridge.__version__; pyproject.toml's version (tests/cli/test_cli_version.py checks both)
PACKAGE_VERSION = "0.1.0"


def version_text(prog):
    """Returns e.g. "npu-dump 0.1.0 (C++ library built for TensorFlow 2.21.0)".

    Args:
      prog: the tool's name.
    """
    try:
        built = f"C++ library built for TensorFlow {native_library.read_build_info().get('tensorflow_version', '?')}"
    except (OSError, ValueError):
        built = "C++ library not built"
    return f"{prog} {PACKAGE_VERSION} ({built})"
