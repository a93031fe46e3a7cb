"""The ``npu_bridge`` logger, configured from Ascend's log environment variables.

``ASCEND_GLOBAL_LOG_LEVEL``: 0 debug, 1 info, 2 warning, 3 error, 4 off. Unset: warning (upstream's default
is error, but upstream writes to log files nobody reads; here warnings go to stderr, where they help).
``ASCEND_SLOG_PRINT_TO_STDOUT=1``: records go to stdout instead of stderr.
"""

import logging
import os
import sys
import threading

from npu_bridge.core.runtime.errors import EnvironmentVariableError

logger = logging.getLogger("npu_bridge")

_LEVELS = {"0": logging.DEBUG, "1": logging.INFO, "2": logging.WARNING, "3": logging.ERROR, "4": logging.CRITICAL + 10}
_handler = None
_configured_from = None
_once_lock = threading.Lock()
_once_keys = set()


def configure(environ=None):
    """(Re)applies ASCEND_GLOBAL_LOG_LEVEL and ASCEND_SLOG_PRINT_TO_STDOUT to the ``npu_bridge`` logger.

    Cheap when the variables have not changed since the last call.

    Args:
      environ: mapping to read instead of ``os.environ``.
    Raises:
      ValueError: ASCEND_GLOBAL_LOG_LEVEL is set to something other than 0..4.
    """
    global _handler, _configured_from
    environ = os.environ if environ is None else environ
    level_text = environ.get("ASCEND_GLOBAL_LOG_LEVEL", "").strip()
    to_stdout = environ.get("ASCEND_SLOG_PRINT_TO_STDOUT", "").strip() == "1"
    key = (level_text, to_stdout)
    if key == _configured_from:
        return
    if level_text and level_text not in _LEVELS:
        raise EnvironmentVariableError(
            f"ASCEND_GLOBAL_LOG_LEVEL has invalid value {level_text!r}. Allowed: 0 (debug), 1 (info), "
            f"2 (warning), 3 (error), 4 (off)"
        )
    logger.setLevel(_LEVELS.get(level_text, logging.WARNING))
    stream = sys.stdout if to_stdout else sys.stderr
    if _handler is None or _handler.stream is not stream:
        if _handler is not None:
            logger.removeHandler(_handler)
        _handler = logging.StreamHandler(stream)
        _handler.setFormatter(logging.Formatter("[npu_bridge] %(levelname)s %(message)s"))
        logger.addHandler(_handler)
        logger.propagate = False
    _configured_from = key


def once(key, level, message, *args):
    """Logs ``message % args`` at ``level`` the first time ``key`` is seen in this process."""
    with _once_lock:
        if key in _once_keys:
            return
        _once_keys.add(key)
    logger.log(level, message, *args)


def warn_once(key, message, *args):
    """Logs a warning the first time ``key`` is seen in this process."""
    once(key, logging.WARNING, message, *args)


def info_once(key, message, *args):
    """Logs an info record the first time ``key`` is seen in this process."""
    once(key, logging.INFO, message, *args)


def import_tensorflow_quietly():
    """Imports TensorFlow for a command-line tool without its C++ start-up lines (oneDNN, CUDA, CPU features).

    TensorFlow prints them through absl before its log level applies, so file descriptor 2 is sent to a
    temporary file during the import; if the import fails, what it printed is shown. ``TF_CPP_MIN_LOG_LEVEL``
    defaults to 2 for the rest of the process unless the user set it.

    Returns:
      The ``tensorflow`` module.
    """
    import tempfile  # pylint: disable=import-outside-toplevel

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            import tensorflow  # pylint: disable=import-outside-toplevel
        except BaseException:
            os.dup2(saved, 2)
            captured.seek(0)
            sys.stderr.write(captured.read().decode("utf-8", errors="replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    return tensorflow
