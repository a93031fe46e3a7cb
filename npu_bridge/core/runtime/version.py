"""The ``--version`` line of every command-line tool; reads the library's build record, imports no TensorFlow."""

import json
import os

from npu_bridge.core.runtime import native_library


def version_text(prog):
    """Returns e.g. "npu-dump 0.1.0 (C++ library built for TensorFlow 2.21.0)".

    Args:
      prog: the tool's name.
    """
    import npu_bridge  # pylint: disable=import-outside-toplevel  (the package root holds __version__)

    info_path = os.path.join(os.path.dirname(native_library.library_path()), native_library.BUILD_INFO_NAME)
    try:
        with open(info_path, encoding="utf-8") as f:
            built = f"C++ library built for TensorFlow {json.load(f).get('tensorflow_version', '?')}"
    except (OSError, ValueError):
        built = "C++ library not built"
    return f"{prog} {npu_bridge.__version__} ({built})"
