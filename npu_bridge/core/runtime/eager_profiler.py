"""``tensorflow.python.eager.profiler`` for user code: TensorFlow 2.0-2.3's profiler API, gone from TensorFlow 2.21.

The zoo's copies of the official models import it at module level (``keras_utils.py``: ``profiler.start()``, then
``profiler.save(logdir, profiler.stop())``). Here it runs on TensorFlow 2.21's profiler session: ``stop()`` returns
the trace (an XSpace protocol buffer) and ``save`` writes it where TensorBoard's profile plugin reads it,
``<logdir>/plugins/profile/<time>/<host>.xplane.pb``, with the empty ``*.profile-empty`` event file that marks the
run. One profiling session at a time, shared with ``tf.profiler.experimental``.
"""

import datetime
import os
import socket
import tempfile
import threading

from npu_bridge.core.runtime import safe_paths
from npu_bridge.core.runtime.errors import NpuUsageError

# the module's own exception names; NpuUsageError is a RuntimeError
ProfilerAlreadyRunningError = NpuUsageError
ProfilerNotRunningError = NpuUsageError

_EVENT_FILE_SUFFIX = ".profile-empty"
_lock = threading.Lock()
_session = None


def start():
    """Starts profiling this process.

    Raises:
      NpuUsageError: a profiling session is already running.
    """
    global _session
    from tensorflow.python.profiler.internal import _pywrap_profiler

    with _lock:
        if _session is not None:
            raise NpuUsageError("profiler.start(): another profiler is running; call profiler.stop() first")
        session = _pywrap_profiler.ProfilerSession()
        session.start("", {})
        _session = session


def stop():
    """Stops profiling.

    Returns:
      The trace (bytes), for ``save``.
    Raises:
      NpuUsageError: no profiling session is running.
    """
    global _session
    with _lock:
        if _session is None:
            raise NpuUsageError("profiler.stop(): no profiler is running; call profiler.start() first")
        session, _session = _session, None
        return session.stop()


def save(logdir, result):
    """Writes a trace ``stop()`` returned where TensorBoard finds it.

    Args:
      logdir: TensorBoard's log directory (created if missing).
      result: the bytes ``stop()`` returned.
    Returns:
      The path of the trace file.
    Raises:
      UnsafePathError: a directory below ``logdir`` is a symlink or another user's.
    """
    stamp = datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S")
    directory = safe_paths.make_dirs(logdir, "plugins", "profile", stamp)
    maybe_create_event_file(logdir)
    path = os.path.join(directory, f"{socket.gethostname()}.xplane.pb")
    safe_paths.write_file(path, result)
    return path


def maybe_create_event_file(logdir):
    """Creates the empty event file that marks ``logdir`` as holding profiles, unless one exists.

    TensorFlow's writer makes it in a private directory; it is then written into ``logdir`` through ``safe_paths``
    (its name holds the time and host, so a link planted there is replaced, never written through).

    Raises:
      UnsafePathError, OSError: as ``safe_paths.make_dirs`` / ``write_file``.
    """
    from tensorflow.python.client import _pywrap_events_writer

    safe_paths.make_dirs(logdir)
    if any(name.endswith(_EVENT_FILE_SUFFIX) for name in os.listdir(logdir)):
        return
    with tempfile.TemporaryDirectory(prefix="npu_bridge_events_") as private:
        writer = _pywrap_events_writer.EventsWriter(os.path.join(private, "events").encode())
        writer.InitWithSuffix(_EVENT_FILE_SUFFIX.encode())
        writer.Close()
        (name,) = os.listdir(private)
        with open(os.path.join(private, name), "rb") as f:
            data = f.read()
    safe_paths.write_file(os.path.join(logdir, name), data)


def start_profiler_server(port):
    """Starts the profiler server on ``port`` (TensorFlow 2.21's ``tf.profiler.experimental.server.start``)."""
    from tensorflow.python.profiler import profiler_v2

    profiler_v2.start_server(port)


class Profiler:
    """``with Profiler(logdir):`` profiles the block and saves the trace to ``logdir``.

    Args:
      logdir: TensorBoard's log directory.
    """

    def __init__(self, logdir):
        self._logdir = logdir

    def __enter__(self):
        start()
        return self

    def __exit__(self, kind, value, traceback):
        save(self._logdir, stop())
