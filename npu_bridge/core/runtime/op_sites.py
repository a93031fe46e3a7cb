"""Where an op was created in the user's code: the last frame of its traceback outside the libraries.

TensorFlow keeps the Python stack of every op it builds (``op.traceback``); the frame that matters to a user is
the last one in their own files, not in TensorFlow, Keras or npu_bridge. This module imports no TensorFlow.
"""

import os

LIBRARY_PARTS = tuple(os.sep + part + os.sep for part in ("tensorflow", "tf_keras", "keras", "npu_bridge"))
_library_files = {}  # file name -> whether it is a library's (or "<string>" and the like); as many as source files


def creation_site(op):
    """Returns "file:line in function" of the user code that created ``op`` (a ``tf.Operation``), or None.

    The frames come from TensorFlow's ``get_user_frames``, which leaves out TensorFlow's own in C++ (a quarter of
    the time of converting every frame; the whole traceback when it is not there). Never raises: an op without a
    traceback (or any failure to read it) gives None.
    """
    try:
        trace = op.traceback
        frames = trace.get_user_frames() if hasattr(trace, "get_user_frames") else list(trace)
        for frame in reversed(frames):
            if not _is_library(frame.filename):
                return f"{frame.filename}:{frame.lineno} in {frame.name}"
    except Exception:  # a site is only a hint: building the graph must not fail for it
        return None
    return None


def _is_library(filename):
    known = _library_files.get(filename)
    if known is None:
        known = filename.startswith("<") or any(part in filename for part in LIBRARY_PARTS)
        _library_files[filename] = known
    return known
