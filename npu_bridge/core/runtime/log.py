"""The ``npu_bridge`` logger, configured from Ascend's log environment variables.

``ASCEND_GLOBAL_LOG_LEVEL``: 0 debug, 1 info, 2 warning, 3 error, 4 off. Unset: warning (upstream's default
is error, but upstream writes to log files nobody reads; here warnings go to stderr, where they help).
``ASCEND_SLOG_PRINT_TO_STDOUT=1``: records go to stdout instead of stderr (0 or unset: stderr).

Also here: hiding TensorFlow's C++ start-up lines (``hidden_tensorflow_startup``; ``NPU_BRIDGE_TF_LOGS=1`` shows
them), which switching npu_bridge on and the command-line tools use.
"""

import contextlib
import logging
import os
import sys
import tempfile
import threading

from npu_bridge.core.runtime.errors import EnvironmentVariableError, shortened

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
      ValueError: ASCEND_GLOBAL_LOG_LEVEL is set to something other than 0..4, or ASCEND_SLOG_PRINT_TO_STDOUT
        to something other than 0 or 1.
    """
    global _handler, _configured_from
    environ = os.environ if environ is None else environ
    level_given = environ.get("ASCEND_GLOBAL_LOG_LEVEL", "")
    stdout_given = environ.get("ASCEND_SLOG_PRINT_TO_STDOUT", "")
    level_text, stdout_text = level_given.strip(), stdout_given.strip()
    key = (level_text, stdout_text)
    if key == _configured_from:
        return
    if level_text and level_text not in _LEVELS:
        raise EnvironmentVariableError(
            f"ASCEND_GLOBAL_LOG_LEVEL has invalid value {shortened(level_given)}. Allowed: 0 (debug), 1 (info), "
            f"2 (warning), 3 (error), 4 (off)"
        )
    if stdout_text not in ("", "0", "1"):
        raise EnvironmentVariableError(
            f"ASCEND_SLOG_PRINT_TO_STDOUT has invalid value {shortened(stdout_given)}. Allowed: 0 (log to stderr, "
            "the default), 1 (log to stdout)"
        )
    to_stdout = stdout_text == "1"
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


TF_LOGS_VARIABLE = "NPU_BRIDGE_TF_LOGS"
_hiding = {"active": False}  # file descriptor 2 is captured (one capture per process)


def tensorflow_startup_shown(environ=None):
    """Returns True when ``NPU_BRIDGE_TF_LOGS=1`` asks to see TensorFlow's C++ start-up lines.

    Args:
      environ: mapping to read instead of ``os.environ``.
    Raises:
      EnvironmentVariableError: NPU_BRIDGE_TF_LOGS is set to something other than 0 or 1.
    """
    environ = os.environ if environ is None else environ
    given = environ.get(TF_LOGS_VARIABLE, "")
    value = given.strip()
    if value not in ("", "0", "1"):
        raise EnvironmentVariableError(
            f"{TF_LOGS_VARIABLE} has invalid value {shortened(given)}. Allowed: 0 (hide TensorFlow's start-up "
            "lines, the default), 1 (show them)"
        )
    return value == "1"


class _PythonStderr:
    """``sys.stderr`` while file descriptor 2 is captured: what Python code writes (warnings, tracebacks) still
    reaches the real stderr, through a duplicate of its descriptor.

    Logging handlers created meanwhile keep this object as their stream, so once the capture ends it forwards
    everything to the ``sys.stderr`` it replaced, and ``close`` (absl's handler calls it at exit) does nothing.
    """

    def __init__(self, replaced, fd):
        self._replaced = replaced
        encoding = getattr(replaced, "encoding", None) or "utf-8"
        self._direct = open(fd, "w", encoding=encoding, errors="backslashreplace", buffering=1, closefd=False)

    def _target(self):
        return self._direct if self._direct is not None else self._replaced

    def end(self):
        direct, self._direct = self._direct, None
        direct.close()  # flushes; closefd=False leaves the descriptor to its owner

    def write(self, text):
        return self._target().write(text)

    def flush(self):
        self._target().flush()

    def close(self):
        pass

    def __getattr__(self, name):
        return getattr(self._target(), name)


@contextlib.contextmanager
def hidden_tensorflow_startup():
    """Hides what TensorFlow's C++ code prints to stderr while the block runs: its start-up lines.

    TensorFlow's import prints lines about oneDNN, CUDA drivers and CPU features through absl before
    ``TF_CPP_MIN_LOG_LEVEL`` applies, so ``TF_CPP_MIN_LOG_LEVEL`` cannot hide them. File descriptor 2 is sent to a
    temporary file during the block; what Python code writes meanwhile (warnings, tracebacks) is not hidden. If
    the block raises, the hidden lines are written to stderr after all. Nothing is hidden when
    ``NPU_BRIDGE_TF_LOGS=1``, when stderr has no descriptor, or inside another such block (that one hides).

    Raises:
      EnvironmentVariableError: NPU_BRIDGE_TF_LOGS has a bad value.
    """
    if tensorflow_startup_shown() or _hiding["active"]:
        yield
        return
    replaced = sys.stderr
    try:
        if replaced is not None:
            replaced.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no descriptor 2 (closed stderr, pythonw)
        yield
        return
    python_stderr = None
    _hiding["active"] = True
    try:
        with tempfile.TemporaryFile() as captured:
            os.dup2(captured.fileno(), 2)
            try:
                if replaced is not None:
                    python_stderr = _PythonStderr(replaced, saved)
                    sys.stderr = python_stderr
                yield
            except BaseException:
                _end_capture(saved, replaced, python_stderr)
                captured.seek(0)
                _write_all(2, captured.read())
                raise
            finally:
                _end_capture(saved, replaced, python_stderr)
    finally:
        _hiding["active"] = False
        os.close(saved)


def _end_capture(saved, replaced, python_stderr):
    """Gives file descriptor 2 and ``sys.stderr`` back (idempotent)."""
    if python_stderr is not None and python_stderr._direct is not None:
        python_stderr.end()
        if sys.stderr is python_stderr:
            sys.stderr = replaced
    os.dup2(saved, 2)


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data) :]


def import_tensorflow_quietly():
    """Imports TensorFlow for a command-line tool without its C++ start-up lines (oneDNN, CUDA, CPU features).

    See ``hidden_tensorflow_startup``; ``TF_CPP_MIN_LOG_LEVEL`` defaults to 2 for the rest of the process unless
    the user set it, so TensorFlow's C++ INFO and WARNING lines stay hidden too.

    Returns:
      The ``tensorflow`` module.
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with hidden_tensorflow_startup():
        import tensorflow

    return tensorflow
