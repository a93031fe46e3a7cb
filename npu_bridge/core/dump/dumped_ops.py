"""Which ops a dump root holds files for: the op names of the dump files in its step directories, found anew
only where something changed.

A root is {dump_path}/{time}/{device_id}; its step directories are {model_name}/{model_id}/{step}. Each scan
lists the step directories (relative to the held root descriptor, without following symlinks) and reads only
those whose modification time moved since they were last read (or that changed in the last two seconds, within
the clock tick of a change that would not move it), so a scan costs one stat per step directory plus
the listing of the new ones. Names come from the file names (``dump_names.parse``; a step directory's
``mapping.csv`` gives back the names of files renamed to digits). What is remembered is bounded:
``MAX_STEP_DIRS`` step directories and ``MAX_NAMES`` op names; beyond them, further ones are not looked at.
"""

import csv
import io
import os
import stat
import time

from npu_bridge.core.dump import dump_names

MAX_STEP_DIRS = 100_000
MAX_NAMES = 100_000
MAX_MAPPING_BYTES = 16 << 20
_SETTLED_NS = 2_000_000_000  # a step directory unchanged this long is not read again until it changes
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class DumpedOps:
    """The op names (as the dump files carry them: sanitized) of one root's dump files."""

    def __init__(self):
        self.names = set()
        self._read = {}  # "{model}/{model id}/{step}" -> modification time (ns) when its files were listed
        self.truncated = False  # a bound was reached

    def scan(self, root_fd):
        """Lists the step directories below the open root ``root_fd`` that changed since the last scan.

        Returns:
          The sanitized op names seen for the first time, sorted.
        Raises:
          OSError: the root cannot be listed (a directory below it that vanishes is skipped).
        """
        new = set()
        for relative, fd in _step_dirs(root_fd):
            try:
                mtime = os.fstat(fd).st_mtime_ns
                if self._read.get(relative) == mtime:
                    continue
                if relative not in self._read and len(self._read) >= MAX_STEP_DIRS:
                    self.truncated = True
                    continue
                if time.time_ns() - mtime >= _SETTLED_NS:  # a younger time may not show a change of the same tick
                    self._read[relative] = mtime
                found = _op_names(fd)
            finally:
                os.close(fd)
            for name in found - self.names:
                if len(self.names) >= MAX_NAMES:
                    self.truncated = True
                    break
                self.names.add(name)
                new.add(name)
        return sorted(new)


def _subdirectories(fd):
    with os.scandir(fd) as entries:
        return sorted(entry.name for entry in entries if entry.is_dir(follow_symlinks=False))


def _open_below(parent, name):
    try:
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
    except OSError:  # vanished, or swapped for something that is not a directory
        return None


def _step_dirs(root_fd):
    """Yields ("{model}/{model id}/{step}", open descriptor) for each step directory below the root; the caller
    closes each descriptor."""
    for model in _subdirectories(root_fd):
        model_fd = _open_below(root_fd, model)
        if model_fd is None:
            continue
        try:
            for model_id in (name for name in _subdirectories(model_fd) if name.isdigit()):
                id_fd = _open_below(model_fd, model_id)
                if id_fd is None:
                    continue
                try:
                    for step in (name for name in _subdirectories(id_fd) if name.isdigit()):
                        step_fd = _open_below(id_fd, step)
                        if step_fd is not None:
                            yield f"{model}/{model_id}/{step}", step_fd
                finally:
                    os.close(id_fd)
        finally:
            os.close(model_fd)


def _op_names(step_fd):
    """The sanitized op names of the dump files in an open step directory."""
    with os.scandir(step_fd) as entries:
        files = [entry.name for entry in entries if not entry.name.startswith(".")]
    mapping = _mapping(step_fd) if dump_names.MAPPING_FILE in files else {}
    names = set()
    for file_name in files:
        parsed = dump_names.parse(mapping.get(file_name, file_name))
        if parsed is not None and parsed.kind in ("dump", "golden"):
            names.add(parsed.op_name)
    return names


def _mapping(step_fd):
    """{file name: original name} of the step directory's mapping.csv ({} when it is not a readable regular file
    of at most ``MAX_MAPPING_BYTES``)."""
    try:
        fd = os.open(dump_names.MAPPING_FILE, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW, dir_fd=step_fd)
    except OSError:
        return {}
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MAPPING_BYTES:
            return {}
        with os.fdopen(os.dup(fd), "rb") as f:
            text = f.read(MAX_MAPPING_BYTES).decode("utf-8", "replace")
    except OSError:
        return {}
    finally:
        os.close(fd)
    mapping = {}
    for row in csv.reader(io.StringIO(text, newline="")):
        if len(row) == 2 and not any("/" in cell or "\\" in cell for cell in row):
            mapping[row[0].strip()] = row[1].strip()
    return mapping
