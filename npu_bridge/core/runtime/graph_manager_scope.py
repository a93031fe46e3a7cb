"""``ScopedGraphManager``: upstream's scope over the graphs Ascend's graph engine keeps for a session.

Off the NPU the graphs of a session are TensorFlow's and live as long as the session, so the scope has nothing
to manage: it accepts its arguments, logs once that it has no effect here, and leaves the code inside it
unchanged.
"""

from npu_bridge.core.runtime import log


class ScopedGraphManager:
    """A context manager with no effect here (see the module docstring).

    Args:
      *args, **kwargs: upstream's arguments; accepted and ignored.
    """

    def __init__(self, *args, **kwargs):
        del args, kwargs  # accepted for upstream's call sites

    def __enter__(self):
        log.info_once(
            (__name__, "no_effect"), "ScopedGraphManager: no effect here (TensorFlow manages the session's graphs)"
        )
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return False
