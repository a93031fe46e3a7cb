"""Where an op was created in the user's code: the last frame of its traceback outside the libraries.

TensorFlow keeps the Python stack of every op it builds (``op.traceback``); the frame that matters to a user is
the last one in their own files, not in TensorFlow, Keras or npu_bridge. This module imports no TensorFlow.
"""

import os

LIBRARY_PARTS = tuple(os.sep + part + os.sep for part in ("tensorflow", "tf_keras", "keras", "npu_bridge"))


def creation_site(op):
    """Returns "file:line in function" of the user code that created ``op`` (a ``tf.Operation``), or None.

    Never raises: an op without a traceback (or any failure to read it) gives None.
    """
    try:
        frames = list(op.traceback)
    except Exception:  # a site is only a hint: building the graph must not fail for it
        return None
    for frame in reversed(frames):
        filename = frame.filename
        if not any(part in filename for part in LIBRARY_PARTS) and not filename.startswith("<"):
            return f"{filename}:{frame.lineno} in {frame.name}"
    return None
