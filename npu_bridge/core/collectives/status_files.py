"""The job's status directory: where each rank says what it is doing in collectives, for its peers and npu-run.

npu-run makes the directory (mode 0700, in its private work directory) and names it to its ranks in
``STATUS_DIR_VARIABLE``. Rank r's watchdog thread writes ``rank<r>.json`` there (``publish``): what it waits in
now and what it finished last (see ``stall_watch``). A rank reporting a stall, and npu-run's summary, read every
rank's file (``read_all``). Everything goes through a descriptor of the directory held from the start: files are
created without following symlinks and renamed into place, and read without following symlinks, bounded in size.
A directory that is not a private directory of this user is refused. This module imports no TensorFlow.
"""

import json
import os
import re
import stat

from npu_bridge.core.runtime import safe_paths

STATUS_DIR_VARIABLE = "NPU_RUN_STATUS_DIR"
FILE_MODE = 0o600
MAX_BYTES = 64 * 1024  # one rank's record is a few hundred bytes
_NAME = re.compile(r"rank(\d{1,9})\.json")
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def make(work_dir):
    """Launcher side: creates the status directory in ``work_dir`` (the launcher's private temporary directory).

    Returns:
      (its path, an open descriptor of it).
    Raises:
      OSError: it cannot be created.
    """
    path = os.path.join(work_dir, "status")
    os.mkdir(path, 0o700)
    return path, open_directory(path)


def open_directory(path):
    """Opens the status directory ``path`` without following a symlink and checks that only this user can use it.

    Returns:
      An open descriptor (the caller keeps it for as long as it writes or reads there).
    Raises:
      OSError: it cannot be opened, or it is not a directory of this user that no one else may enter.
    """
    fd = os.open(path, _DIRECTORY_FLAGS)
    info = os.fstat(fd)
    if info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o077:
        os.close(fd)
        raise PermissionError(
            f"{STATUS_DIR_VARIABLE} names a directory that is not private to this user "
            f"(owner {info.st_uid}, mode {stat.S_IMODE(info.st_mode):04o})"
        )
    return fd


def publish(dir_fd, rank, record):
    """Writes ``record`` (a JSON-able dict) as rank ``rank``'s status, replacing the previous one whole.

    Raises:
      OSError: it could not be written.
    """
    safe_paths.write_file_at(dir_fd, f"rank{rank}.json", json.dumps(record, sort_keys=True), FILE_MODE)


def read_all(dir_fd):
    """Returns {rank: record} of every status file in the directory; unreadable or malformed files are left out."""
    records = {}
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return records
    for name in names:
        match = _NAME.fullmatch(name)
        if match is None:
            continue
        record = _read(dir_fd, name)
        if isinstance(record, dict) and record.get("rank") == int(match.group(1)):
            records[int(match.group(1))] = record
    return records


def _read(dir_fd, name):
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
