"""The raw data of a profile: TensorFlow's step stats of every traced run, appended as the runs happen.

File ``device_<id>/data/step_stats.records`` starts with ``MAGIC``; each record is a fixed header
(``_HEADER``: payload size, session index, run index within the session, wall-clock start and end of the
``Session.run`` call in ns since the epoch, size of the graph signature) followed by the run's graph signature
(UTF-8: what it fetched and fed, which identifies the graph TensorFlow built for it) and a serialized
``tensorflow.StepStats``. Files of the first format (``MAGIC_V1``, no signature) are still read. Summaries are
computed from this file afterwards (``npu_bridge.core.profiling.export``), so a run pays only for one serialization
and a buffered write, and ``npu-prof export`` can redo the analysis later. Records carry no marker of their own,
so reading stops at a damaged record (a killed process's last one, a corrupt header); ``ReadStatus`` says where.
"""

import dataclasses
import errno
import os
import struct
import threading

from npu_bridge.core.runtime import bounded_files, safe_paths
from npu_bridge.core.runtime.errors import FileReadError, ProfileDataError

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
      offset: byte offset of the record in its file (not compared).
    """

    session: int
    run: int
    start_ns: int
    end_ns: int
    step_stats: bytes
    graph: str = ""
    offset: int = dataclasses.field(default=0, compare=False)


class RawTraceWriter:
    """Appends runs to a raw trace file; thread-safe.

    Args:
      path: the file to create; it must not exist.
      limit_bytes: stop writing when the file would grow beyond this size; None for no limit.
    """

    def __init__(self, path, limit_bytes=None):
        self.path = path
        self._limit = limit_bytes
        self._lock = threading.Lock()
        # A new file (a name that exists, a planted symlink included, is an error); times and op names, no tensor data.
        self._file = safe_paths.create_new(path, safe_paths.REPORT_MODE, buffering=_BUFFER_BYTES)
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


class ReadStatus:
    """What ``read_runs`` found in a raw trace file: how many runs it read and where the file is damaged.

    Records carry no marker of their own, so nothing after a damaged record can be found again: reading stops
    there and the rest of the file is skipped.

    Attributes:
      path: the file.
      size: its size in bytes (once ``read_runs`` opened it).
      runs: the runs read.
      damaged_at: byte offset of the first damaged record; None while the data is complete.
      bytes_skipped: bytes from ``damaged_at`` to the end of the file, which were not read.
      reason: what is wrong at ``damaged_at``.
    """

    def __init__(self, path):
        self.path = path
        self.size = 0
        self.runs = 0
        self.damaged_at = None
        self.bytes_skipped = 0
        self.reason = ""

    @property
    def complete(self):
        """True when no damage was found."""
        return self.damaged_at is None

    def mark_damaged(self, offset, reason):
        """Records damage at ``offset`` (the first one found wins); the rest of the file is skipped.

        Args:
          offset: byte offset of the damaged record.
          reason: what is wrong there.
        """
        if self.damaged_at is None:
            self.damaged_at, self.bytes_skipped, self.reason = offset, max(self.size - offset, 0), reason

    def reject(self, run, reason):
        """Records that a run ``read_runs`` yielded is damaged after all (its step stats do not parse): it is not
        counted, and the file is damaged from its record on; stop reading.

        Args:
          run: the ``RawRun``.
          reason: what is wrong with it.
        """
        if self.damaged_at is None:
            self.runs -= 1
            self.mark_damaged(run.offset, reason)

    def message(self):
        """One sentence naming the file, the runs read, the offset and the bytes skipped ("" when complete)."""
        if self.complete:
            return ""
        return (
            f"raw profiling data {self.path} is damaged at byte {self.damaged_at} ({self.reason}); "
            f"{self.runs} runs were read before it and the remaining {self.bytes_skipped} bytes are skipped: "
            "the profile is incomplete"
        )

    def to_json(self):
        """The damage as a JSON-able dict for info.json."""
        return {
            "file": self.path,
            "runs_read": self.runs,
            "damaged_at": self.damaged_at,
            "bytes_skipped": self.bytes_skipped,
            "reason": self.reason,
            "message": self.message(),
        }


def read_runs(path, status=None):
    """Yields the ``RawRun`` records of a raw trace file in the order they were written.

    Reading stops at the first damaged record: one cut short at the end (the process died while writing) or a
    header that does not fit the file (sizes beyond its end, end before start, a run ending at time 0 -- zeros, as a
    zero-filled or sparse file holds --, a signature that is not UTF-8).
    Everything before it is complete; ``status`` says what was skipped.

    Args:
      path: the raw trace file.
      status: an optional ``ReadStatus`` of ``path``, updated as records are read.
    Raises:
      ProfileDataError: the file is missing, not a regular file, or not a raw trace file.
    """
    status = ReadStatus(path) if status is None else status
    try:
        f = bounded_files.open_regular(path)
    except FileReadError as e:
        if e.errno == errno.ENOENT:
            raise ProfileDataError(f"raw profiling data {path} does not exist") from None
        raise ProfileDataError(f"raw profiling data {path} cannot be read: {e.strerror}") from None
    with f:
        file_size = status.size = os.fstat(f.fileno()).st_size
        magic = f.read(len(MAGIC))
        if magic not in (MAGIC, MAGIC_V1):
            raise ProfileDataError(f"{path} is not an npu_bridge raw profiling file (it lacks the {MAGIC!r} header)")
        header_format = _HEADER if magic == MAGIC else _HEADER_V1
        offset = len(magic)
        while offset < file_size:
            header = f.read(header_format.size)
            if len(header) < header_format.size:
                status.mark_damaged(offset, "a record header cut short")
                return
            fields = header_format.unpack(header)
            size, session, run, start_ns, end_ns = fields[:5]
            signature_size = fields[5] if len(fields) > 5 else 0
            left = file_size - offset - header_format.size
            if size + signature_size > left:
                needed = size + signature_size
                status.mark_damaged(
                    offset,
                    f"its header asks for {needed} more bytes, {left} remain: the record is cut short or its header "
                    "is corrupt",
                )
                return
            if start_ns < 0 or end_ns < start_ns:
                status.mark_damaged(offset, f"a corrupt record header (run from {start_ns} to {end_ns} ns)")
                return
            if end_ns == 0:
                # No traced run ends at the epoch: this is zeros (a file padded or overwritten with them, a sparse
                # file), which would otherwise read as millions of empty records.
                zeros = header.count(0) == len(header)
                status.mark_damaged(
                    offset,
                    "a record header of zero bytes: the file is zero-filled from here"
                    if zeros
                    else "a corrupt record header (a run that ended at time 0)",
                )
                return
            signature = f.read(signature_size)
            payload = f.read(size)
            if len(signature) < signature_size or len(payload) < size:  # the file shrank while being read
                status.mark_damaged(offset, "a record cut short")
                return
            try:
                graph = signature.decode("utf-8")
            except UnicodeDecodeError:
                status.mark_damaged(offset, "a corrupt record header (its graph signature is not UTF-8)")
                return
            status.runs += 1
            yield RawRun(session, run, start_ns, end_ns, payload, graph, offset)
            offset += header_format.size + signature_size + size
