"""Finds and loads the npu_bridge C++ library (ops, kernels, the NpuOptimizer Grappler pass).

The library is loaded exactly once per process, by ``import npu_bridge``. It must have been built against
the TensorFlow that is running (C++ ABI); ``setup.py`` records that version in ``_build_info.json`` next to
the library and this module refuses to load a library built for another version.
"""

import ctypes
import json
import os
import pathlib
import threading

from npu_bridge.core.runtime import c_functions
from npu_bridge.core.runtime.errors import NativeLibraryError

LIBRARY_NAME = "libnpu_bridge.so"
BUILD_INFO_NAME = "_build_info.json"
REBUILD_HINT = (
    "Rebuild it against the installed TensorFlow from the project directory with "
    "`python -m pip install --no-build-isolation -e .` (or `python setup.py build_ext --inplace`)."
)

_lock = threading.Lock()
_ops_module = None
_cdll = None


def library_path():
    """Returns the absolute path where the C++ library is expected."""
    return str(pathlib.Path(__file__).resolve().parents[2] / LIBRARY_NAME)  # npu_bridge/, the package root


def build_info_path():
    """Returns the path of the build record setup.py writes next to the library."""
    return os.path.join(os.path.dirname(library_path()), BUILD_INFO_NAME)


def read_build_info():
    """Returns the build record ({"tensorflow_version": ..., ...}) of the library.

    Raises:
      OSError, ValueError: the record is missing, unreadable or not JSON.
    """
    with open(build_info_path(), encoding="utf-8") as f:
        return json.load(f)


def _check_build_info(tf_version):
    if not os.path.exists(library_path()):
        raise NativeLibraryError(
            f"npu_bridge: the C++ library {library_path()} is missing; it is built when the project is "
            f"installed. {REBUILD_HINT}"
        )
    try:
        info = read_build_info()
    except (OSError, ValueError) as e:
        raise NativeLibraryError(
            f"npu_bridge: cannot read the build record {build_info_path()} of the C++ library ({e}). {REBUILD_HINT}"
        ) from e
    built = info.get("tensorflow_version")
    if built != tf_version:
        raise NativeLibraryError(
            f"npu_bridge: the C++ library {library_path()} was built against TensorFlow {built}, but "
            f"TensorFlow {tf_version} is running. {REBUILD_HINT}"
        )
    return info


def load():
    """Loads the library once and returns the op module made by ``tf.load_op_library``.

    Returns:
      The Python module whose functions build the project's custom ops.
    Raises:
      NativeLibraryError: the library is missing, was built for another TensorFlow, or fails to load.
    """
    global _ops_module, _cdll
    if _ops_module is not None:
        return _ops_module
    # Before the lock: importing TensorFlow switches npu_bridge on, which loads the library (activation.py).
    import tensorflow as tf

    with _lock:
        if _ops_module is not None:
            return _ops_module
        _check_build_info(tf.__version__)
        try:
            module = tf.load_op_library(library_path())
            # dlopen of an already loaded path returns the same handle, so ctypes sees the same globals.
            cdll = ctypes.CDLL(library_path())
        except Exception as e:  # TF raises NotFoundError for unresolved symbols; ctypes raises OSError.
            raise NativeLibraryError(
                f"npu_bridge: failed to load the C++ library {library_path()}: {e}. {REBUILD_HINT}"
            ) from e
        _declare_c_api(cdll)
        _cdll = cdll
        _ops_module = module
    return _ops_module


_C_TYPES = {
    "void": None,
    "int": ctypes.c_int,
    "size_t": ctypes.c_size_t,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
    "const char*": ctypes.c_char_p,
    "char*": ctypes.c_char_p,
}


def _declare_c_api(cdll):
    """Gives every function of ``c_functions.FUNCTIONS`` its ctypes signature (the one binding of the C ABI)."""
    for name, returns, parameters, _ in c_functions.FUNCTIONS:
        function = getattr(cdll, name)
        function.restype = _C_TYPES[returns]
        function.argtypes = [_C_TYPES[c_type] for c_type, _ in parameters]


def is_loaded():
    """Returns True once ``load()`` has succeeded in this process."""
    return _ops_module is not None


def ops():
    """Returns the op module (loading the library if needed)."""
    return load()


def c_api():
    """Returns the ctypes handle of the library for its ``extern "C"`` state functions."""
    load()
    return _cdll


def read_json(function_name):
    """Calls a ``size_t f(char* buf, size_t len)`` C function of the library and parses its JSON."""
    fn = getattr(c_api(), function_name)
    size = 4096
    while True:
        buf = ctypes.create_string_buffer(size)
        needed = fn(buf, size)
        if needed == 0:  # the function caught an exception (every answer is at least "{}")
            raise NativeLibraryError(f"{LIBRARY_NAME}: {function_name} failed inside the library (out of memory?)")
        if needed < size:
            return json.loads(buf.value.decode("utf-8"))
        size = needed + 1
