"""The raw data of a profile: TensorFlow's step stats of every traced run, appended as the runs happen.

File ``device_<id>/data/step_stats.records`` starts with ``MAGIC``; each record is a fixed header
(``_HEADER``: payload size, session index, run index within the session, wall-clock start and end of the
``Session.run`` call in ns since the epoch, size of the graph signature) followed by the run's graph signature
(UTF-8: what it fetched and fed, which identifies the graph TensorFlow built for it) and a serialized
``tensorflow.StepStats``. Files of the first format (``MAGIC_V1``, no signature) are still read. Summaries are
computed from this file afterwards (``npu_bridge.core.profiling.export``), so a run pays only for one serialization
and a buffered write, and ``npu-prof export`` can redo the analysis later.
"""

import dataclasses
import os
import struct
import threading

from npu_bridge.core.runtime.errors import ProfileDataError

MAGIC = b"NPUPROF2"
MAGIC_V1 = b"NPUPROF1"
FILE_NAME = "step_stats.records"
_HEADER = struct.Struct("<IIIqqI")
_HEADER_V1 = struct.Struct("<IIIqq")
_BUFFER_BYTES = 1 << 20


@dataclasses.dataclass(frozen=True)
class RawRun:
    """One traced ``Session.run``.

    Attributes:
      session: index of the session in the process (order of creation).
      run: index of the run within its session.
      start_ns, end_ns: wall-clock time of the ``Session.run`` call, ns since the epoch.
      step_stats: the serialized ``tensorflow.StepStats`` of the run.
      graph: the run's graph signature ("" when the file predates signatures).
    """

    session: int
    run: int
    start_ns: int
    end_ns: int
    step_stats: bytes
    graph: str = ""


class RawTraceWriter:
    """Appends runs to a raw trace file; thread-safe.

    Args:
      path: the file to create.
      limit_bytes: stop writing when the file would grow beyond this size; None for no limit.
    """

    def __init__(self, path, limit_bytes=None):
        self.path = path
        self._limit = limit_bytes
        self._lock = threading.Lock()
        self._file = open(path, "wb", buffering=_BUFFER_BYTES)  # pylint: disable=consider-using-with
        self._file.write(MAGIC)
        self.bytes_written = len(MAGIC)
        self.runs_written = 0
        self.runs_dropped = 0

    def write(self, session, run, start_ns, end_ns, step_stats, graph=""):
        """Appends one run (``graph``: its graph signature).

        Returns:
          False when the run was dropped because the size limit is reached (or the writer is closed).
        """
        signature = graph.encode("utf-8")
        size = _HEADER.size + len(signature) + len(step_stats)
        with self._lock:
            if self._file is None or (self._limit is not None and self.bytes_written + size > self._limit):
                self.runs_dropped += 1
                return False
            self._file.write(_HEADER.pack(len(step_stats), session, run, start_ns, end_ns, len(signature)))
            self._file.write(signature)
            self._file.write(step_stats)
            self.bytes_written += size
            self.runs_written += 1
            return True

    def close(self):
        """Flushes and closes the file; later writes are dropped."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def read_runs(path):
    """Yields the ``RawRun`` records of a raw trace file in the order they were written.

    A record cut short at the end (the process died while writing) ends the iteration silently: everything
    before it is complete.

    Args:
      path: the raw trace file.
    Raises:
      ProfileDataError: the file is missing or is not a raw trace file.
    """
    if not os.path.isfile(path):
        raise ProfileDataError(f"raw profiling data {path} does not exist")
    with open(path, "rb") as f:
        magic = f.read(len(MAGIC))
        if magic not in (MAGIC, MAGIC_V1):
            raise ProfileDataError(f"{path} is not an npu_bridge raw profiling file (it lacks the {MAGIC!r} header)")
        header_format = _HEADER if magic == MAGIC else _HEADER_V1
        while True:
            header = f.read(header_format.size)
            if len(header) < header_format.size:
                return
            fields = header_format.unpack(header)
            size, session, run, start_ns, end_ns = fields[:5]
            signature_size = fields[5] if len(fields) > 5 else 0
            signature = f.read(signature_size)
            payload = f.read(size)
            if len(signature) < signature_size or len(payload) < size:
                return
            yield RawRun(session, run, start_ns, end_ns, payload, signature.decode("utf-8", "replace"))
