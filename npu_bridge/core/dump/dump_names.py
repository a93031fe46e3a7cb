"""File names of Ascend dump artifacts, and how to read them back.

  dump file        {op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}
                   (newer runtimes: {op_type}.{op_name}.{stream_id}.{task_id}.{timestamp}.{task_type}.
                   {context_id}.{thread_id}.{device_id}; older ones leave out the stream id)
  overflow record  Opdebug.Node_OpDebug.{task_id}.{stream_id}.{timestamp}
  golden tensor    {op_name}.{output_index}.{timestamp}.npy          (CPU/GPU ground truth)
  converted tensor {dump file name}.{input|output}.{index}.npy      (``npu-dump convert``, msaccucmp)

Op types and names have '.', '/', '\\' and ' ' replaced by '_'. A name longer than 255 characters is replaced
by digits, and the directory's ``mapping.csv`` lists "{digits},{original name}". Both are names of files in that
directory: a line whose name is a path (absolute, with '..' or another directory) is refused naming mapping.csv
and the path (``safe_paths.inside``), so a hostile mapping.csv cannot point a reader elsewhere.
"""

import csv
import dataclasses
import errno
import io
import os
import re
from typing import Optional

from npu_bridge.core.runtime import bounded_files, safe_paths
from npu_bridge.core.runtime.errors import DumpFormatError, UnsafePathError, shortened_text

MAPPING_FILE = "mapping.csv"
STATISTICS_FILE = "statistic.csv"
OPDEBUG_TYPE, OPDEBUG_NAME = "Opdebug", "Node_OpDebug"
_UNSAFE = re.compile(r"[./\\ ]")
_WORD = r"[A-Za-z0-9_-]+"
_DUMP = re.compile(rf"^(?P<type>{_WORD})\.(?P<name>{_WORD})\.(?P<numbers>\d+(?:\.\d+)+)$")
_GOLDEN = re.compile(rf"^(?P<name>{_WORD})\.(?P<index>\d+)\.(?P<ts>\d{{1,255}})\.npy$")
_CONVERTED = re.compile(rf"^(?P<dump>{_WORD}\.{_WORD}\.\d+(?:\.\d+)+)\.(?P<io>input|output)\.(?P<index>\d+)\.npy$")
_TIMESTAMP_DIGITS = 13  # microsecond timestamps have 16 digits; task and stream ids are small


@dataclasses.dataclass(frozen=True)
class DumpName:
    """What a file name says.

    Attributes:
      kind: "dump", "opdebug", "golden" or "converted".
      op_type: the op type ("" for golden tensors).
      op_name: the sanitized op name ("Node_OpDebug" for overflow records).
      task_id, stream_id: None when the name does not carry them.
      timestamp: microseconds, None when absent.
      io, index: for golden and converted tensors: "input"/"output" and the tensor index.
    """

    kind: str
    op_type: str
    op_name: str
    task_id: Optional[int] = None
    stream_id: Optional[int] = None
    timestamp: Optional[int] = None
    io: Optional[str] = None
    index: Optional[int] = None


def sanitize(name):
    """Applies Ascend's file-name rule to an op type or name ('.', '/', '\\', ' ' become '_')."""
    return _UNSAFE.sub("_", name)


def parse(file_name):
    """Reads a dump artifact's file name.

    Args:
      file_name: a base name (after any mapping.csv lookup).
    Returns:
      A ``DumpName``, or None when the name is not one of the artifact names above.
    """
    match = _GOLDEN.match(file_name)
    if match:
        return DumpName("golden", "", match["name"], timestamp=int(match["ts"]), io="output", index=int(match["index"]))
    match = _CONVERTED.match(file_name)
    if match:
        base = _parse_dump(match["dump"])
        if base is not None:
            return dataclasses.replace(base, kind="converted", io=match["io"], index=int(match["index"]))
        return None
    return _parse_dump(file_name)


def _parse_dump(file_name):
    match = _DUMP.match(file_name)
    if not match:
        return None
    numbers = [int(n) for n in match["numbers"].split(".")]
    texts = match["numbers"].split(".")
    stamp = next((i for i, text in enumerate(texts) if len(text) >= _TIMESTAMP_DIGITS), len(numbers) - 1)
    ids, trailing = numbers[:stamp], numbers[stamp + 1 :]
    if not ids or len(ids) > 2:
        return None
    if len(ids) == 1:
        task, stream = ids[0], None
    elif trailing:  # the newer runtime puts the stream id first
        stream, task = ids
    else:
        task, stream = ids
    kind = "opdebug" if (match["type"], match["name"]) == (OPDEBUG_TYPE, OPDEBUG_NAME) else "dump"
    return DumpName(kind, match["type"], match["name"], task, stream, numbers[stamp])


def read_mapping(directory):
    """Returns {file name: original name} from ``directory/mapping.csv`` ({} when there is none).

    Raises:
      ValueError: a line of mapping.csv is not "name,original".
      UnsafePathError: a name in it is a path (absolute, with '..' or a directory): the message names mapping.csv
        and the path.
    """
    path = os.path.join(directory, MAPPING_FILE)
    if not os.path.exists(path):
        return {}
    mapping = {}
    try:
        text = bounded_files.read_text(path)
    except OSError as e:
        raise DumpFormatError(f"{path}: cannot read it: {e.strerror}") from None
    for number, row in enumerate(csv.reader(io.StringIO(text, newline="")), 1):
        if not row:
            continue
        if len(row) != 2:
            raise DumpFormatError(f"{path} line {number}: expected 'file name,original name', got {row!r}")
        name, original = (_file_name(directory, cell.strip(), path) for cell in row)
        mapping[name] = original
    return mapping


def _file_name(directory, name, source):
    """``name`` (read from ``source``) when it names a file of ``directory``; UnsafePathError otherwise."""
    safe_paths.inside(directory, name, source)  # not absolute, no '..'
    if "/" in name or "\\" in name:
        raise UnsafePathError(
            errno.EINVAL,
            f"{shortened_text(source)} names the path {shortened_text(repr(name))}: it lists names of files in its "
            "own directory, not paths into other directories",
        )
    return name
