"""Reading the small files users name (option files, rank tables, job files) without hanging or flooding.

A FIFO, a terminal or ``/dev/zero`` given where a JSON or .ini file belongs would block forever or read
gigabytes; every such read goes through ``read_text``, which opens without blocking, refuses anything but a
regular file and stops at a size limit.
"""

import errno
import json
import os
import stat

from npu_bridge.core.runtime.errors import FileReadError

DEFAULT_LIMIT = 16 * 1024 * 1024  # bytes: far above any rank table or option file, far below a mistake

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def read_text(path, limit=DEFAULT_LIMIT):
    """Returns the UTF-8 text of a regular file of at most ``limit`` bytes.

    Args:
      path: the file.
      limit: the largest size accepted, in bytes.
    Returns:
      The text.
    Raises:
      FileReadError: the file is missing or unreadable, is not a regular file, is larger than ``limit``, or is
        not UTF-8 text (``strerror`` says which).
    """
    fd = _open_regular_fd(path)
    try:
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise FileReadError(errno.EFBIG, f"it is larger than {limit} bytes", str(path))
    finally:
        os.close(fd)
    data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FileReadError(errno.EINVAL, f"it is not UTF-8 text ({e.reason} at byte {e.start})", str(path)) from None


def open_regular(path):
    """Opens a regular file for reading in binary, without blocking on a FIFO or a device (for large files read
    piece by piece; the caller bounds its reads by the size ``os.fstat`` gives).

    Args:
      path: the file.
    Returns:
      A binary file object (close it).
    Raises:
      FileReadError: the file is missing or unreadable, or is not a regular file (``strerror`` says which).
    """
    return os.fdopen(_open_regular_fd(path), "rb")


def _open_regular_fd(path):
    """A read-only descriptor of ``path``, opened without blocking and checked to be a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise FileReadError(e.errno, e.strerror or str(e), str(path)) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileReadError(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file", str(path))
    return fd


def kind_of(mode):
    """What a file that is not a regular file is, in words ("a FIFO", "a directory", ...), from its ``st_mode``."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def parse_json(text):
    """``json.loads`` for text users give: nesting too deep for Python's parser is a ``JSONDecodeError`` like any
    other malformed JSON (not a ``RecursionError``), so callers report it with the input's name.

    Raises:
      json.JSONDecodeError: malformed or too deeply nested JSON.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("the JSON is nested too deeply", text, 0) from None
