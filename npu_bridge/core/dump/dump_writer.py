"""Python's handle on the C++ dump writer (ops/runtime/dump_writer.cc) and the exception-capture slots.

The writer writes every dump artifact on its own threads; ``flush`` waits until everything queued is on
disk. Its memory limit, thread count and file mode come from the environment:
  NPU_BRIDGE_DUMP_QUEUE_MB   tensors the writer may hold before training waits for the disk (MB, default 256,
                             at most 1048576 = 1 TiB)
  NPU_BRIDGE_DUMP_THREADS    writer threads (default 2, at most 16; fixed once the writer has started)
  NPU_BRIDGE_DATA_MODE       the mode of every file it writes (octal, default 600: owner-only; see
                             ``safe_paths.data_mode``), and of the directories it creates (``directory_mode``)
  NPU_BRIDGE_DUMP_GOLDEN     1 (default) writes golden .npy files next to the dump files, 0 does not (read for
                             each dumping session, ``golden_files_wanted``)
The first two are whole numbers in ASCII digits (``str.isdigit`` and ``int`` also take other scripts' digits).
"""

import ctypes
import json
import os
import re

from npu_bridge.core.runtime import native_library, safe_paths
from npu_bridge.core.runtime.errors import NpuOptionError

QUEUE_VARIABLE = "NPU_BRIDGE_DUMP_QUEUE_MB"
THREADS_VARIABLE = "NPU_BRIDGE_DUMP_THREADS"
GOLDEN_VARIABLE = "NPU_BRIDGE_DUMP_GOLDEN"
_DEFAULT_QUEUE_MB = 256
_DEFAULT_THREADS = 2
MAX_QUEUE_MB = 1 << 20  # 1 TiB; the byte count (MB << 20) must fit the writer's int64 with room to spare
MAX_THREADS = 16
_DIGITS = re.compile(r"[0-9]+")
_RESULT_BUFFER = 1 << 16


def flush():
    """Waits until every dump record queued so far is written (the GIL is released while waiting)."""
    native_library.c_api().npu_bridge_dump_flush()


def changes():
    """A counter that moves whenever an overflow record is queued or written, or a write fails (cheap to poll)."""
    return int(native_library.c_api().npu_bridge_dump_changes())


def status():
    """Returns the writer's counters: files_written, bytes_written, files_lost, lost_dirs ({step directory:
    files lost}), lost_dirs_dropped, unwritten_files (statistic.csv / mapping.csv files missing rows),
    queued_bytes, error_count, errors (the first 20), last_error, overflow_events, ..."""
    return native_library.read_json("npu_bridge_dump_status_json")


def overflow_events(start=0):
    """Returns the overflow records written so far, from index ``start`` (dicts: opdebug, dump, dir, op_name,
    op_type, model_id, step, task_id, status, timestamp)."""
    function = native_library.c_api().npu_bridge_dump_overflow_events_json
    size = _RESULT_BUFFER
    while True:
        buffer = ctypes.create_string_buffer(size)
        needed = function(start, buffer, size)
        if needed < size:
            return json.loads(buffer.value.decode("utf-8"))
        size = needed + 1


def exception_dump(slot):
    """Writes the inputs held for a failed op.

    Args:
      slot: "{session id}/{node name}".
    Returns:
      {"path", "op_name", "op_type", "inputs"} on success, {"error": text} otherwise.
    """
    buffer = ctypes.create_string_buffer(_RESULT_BUFFER)
    needed = native_library.c_api().npu_bridge_exception_dump_json(slot.encode("utf-8"), buffer, _RESULT_BUFFER)
    if needed >= _RESULT_BUFFER:
        return {"error": f"the result for {slot} is too long to read"}
    return json.loads(buffer.value.decode("utf-8"))


def configure_from_environment(environ=None):
    """Applies NPU_BRIDGE_DUMP_QUEUE_MB, NPU_BRIDGE_DUMP_THREADS and NPU_BRIDGE_DATA_MODE.

    Returns:
      The mode of the files the writer creates.
    Raises:
      NpuOptionError: a size variable is not a whole number in ASCII digits within its range.
      EnvironmentVariableError: NPU_BRIDGE_DATA_MODE is not an octal file mode of read and write bits.
    """
    environ = os.environ if environ is None else environ
    queue_mb = _positive(environ, QUEUE_VARIABLE, _DEFAULT_QUEUE_MB, MAX_QUEUE_MB)
    threads = _positive(environ, THREADS_VARIABLE, _DEFAULT_THREADS, MAX_THREADS)
    file_mode = safe_paths.data_mode(environ)
    native_library.c_api().npu_bridge_dump_configure(
        queue_mb << 20, threads, file_mode, safe_paths.directory_mode(file_mode)
    )
    return file_mode


def golden_files_wanted(environ=None):
    """NPU_BRIDGE_DUMP_GOLDEN: 1 (default) writes golden .npy files next to the dump files, 0 does not.

    Raises:
      NpuOptionError: the variable holds something else.
    """
    text = (os.environ if environ is None else environ).get(GOLDEN_VARIABLE, "").strip()
    if text not in ("", "0", "1"):
        raise NpuOptionError(
            GOLDEN_VARIABLE, text, "0 / 1", "the environment variable chooses whether golden .npy files are written"
        )
    return text != "0"


def _positive(environ, name, default, maximum):
    """The variable ``name`` as an integer in [1, maximum] (``default`` when unset or blank)."""
    text = environ.get(name, "").strip()
    if not text:
        return default
    # ASCII digits only: str.isdigit() also takes "²" (which int() then refuses) and int() takes "٣" as 3. The
    # length check keeps int() away from numbers past its 4300-digit limit.
    if not _DIGITS.fullmatch(text) or len(text) > 30 or not 1 <= int(text) <= maximum:
        raise NpuOptionError(
            name,
            text,
            f"a positive integer <= {maximum} in ASCII digits",
            "the environment variable configures the dump writer",
        )
    return int(text)
