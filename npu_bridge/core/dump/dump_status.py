"""Whether a dump is complete: {dump root}/dump_status.json, written by the process that dumps.

The file is written when a session starts dumping into a root ({dump_path}/{time}/{device id}) with state
"running", and rewritten whenever a session closes and when the process exits with state "complete" or
"incomplete" (still "running" while another session dumps into the root), the number of files that could not
be written and the step directories they belong to. A process that dies leaves "running" behind, which
readers take as "the newest step may be incomplete". So that a full disk cannot keep the final state from
being recorded, a "running" root also holds a small hidden reserve file, given up for the final write when
the disk has no room left. Hidden ``.tmp.*`` files in a step directory are writes a killed
process left unfinished.

Readers (``npu-dump info``, ``overflow``, ``compare``) call ``problems`` to flag incomplete steps.
"""

import dataclasses
import errno
import json
import os
import socket
import time
from typing import Dict, Optional

from npu_bridge.core.dump import dump_names, dump_tree
from npu_bridge.core.runtime import bounded_files, safe_paths

STATUS_FILE = "dump_status.json"
RESERVE_FILE = ".dump_status.reserve"
_RESERVE_BYTES = 64 * 1024
_RESERVE_MODE = 0o600
_TEMPORARY_PREFIX = ".tmp."
_ANCESTORS_SEARCHED = 8  # a tree given at step level sits 3 levels below its root


@dataclasses.dataclass
class Problem:
    """A step directory that does not hold everything it should.

    Attributes:
      step_dir: the directory.
      text: what is wrong, for people.
    """

    step_dir: str
    text: str


def write(dir_fd, root, state, lost_dirs=None, files_lost=0, unwritten=(), errors=()):
    """Writes dump_status.json into the dump root, held open as ``dir_fd`` (``safe_paths.open_dirs``): the file
    goes there wherever the directory has been moved, created without following symlinks and renamed into place.

    Args:
      dir_fd: the dump root, open.
      root: the dump root's path (the paths in the status are relative to it).
      state: "running", "complete" or "incomplete".
      lost_dirs: {step directory: files lost there} (directories under ``root``).
      files_lost: files of this root that could not be written.
      unwritten: appended files (statistic.csv, mapping.csv) whose rows are not all on disk.
      errors: a few error messages.
    Raises:
      OSError: the file could not be written.
    """
    status = {
        "state": state,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "updated": time.strftime("%Y-%m-%d %H:%M:%S"),
        "files_lost": files_lost,
        "lost_steps": {os.path.relpath(d, root): n for d, n in sorted((lost_dirs or {}).items())},
        "unwritten_files": [os.path.relpath(p, root) for p in unwritten],
        "errors": list(errors),
    }
    _write_at(dir_fd, state, json.dumps(status, indent=1) + "\n")


def _write_at(dir_fd, state, text):
    try:
        safe_paths.write_file_at(dir_fd, STATUS_FILE, text)
    except OSError as e:
        if e.errno != errno.ENOSPC or not _exists_at(dir_fd, RESERVE_FILE):
            raise
        os.unlink(RESERVE_FILE, dir_fd=dir_fd)
        safe_paths.write_file_at(dir_fd, STATUS_FILE, text)
    try:
        if state != "running":
            os.unlink(RESERVE_FILE, dir_fd=dir_fd)
        elif not _exists_at(dir_fd, RESERVE_FILE):
            safe_paths.write_file_at(dir_fd, RESERVE_FILE, b"\0" * _RESERVE_BYTES, _RESERVE_MODE)
    except OSError:
        pass  # no reserve (yet): the final write may then fail on a full disk, and is logged


def _exists_at(dir_fd, name):
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def read(path) -> Optional[Dict]:
    """The status in file ``path``, or None when it is missing or damaged."""
    try:
        status = bounded_files.parse_json(bounded_files.read_text(path, limit=4 << 20))
    except (OSError, ValueError):
        return None
    return status if isinstance(status, dict) else None


def problems(tree):
    """Lists the incomplete step directories of a dump tree.

    Args:
      tree: a dump tree at any level (or a file in one: then only the file's own directory is looked at, not the
        directories below it).
    Returns:
      ``Problem`` list, sorted by directory.
    """
    tree = os.path.abspath(os.fspath(tree))
    if os.path.isdir(tree):
        top, listing = tree, dump_tree.walk(tree)
    else:
        top = os.path.dirname(tree)
        listing = [(top, [e.name for e in _entries(top) if not e.is_dir(follow_symlinks=False)])]
    found = {}
    step_dirs, status_roots = [], []
    for directory, files in listing:
        if os.path.basename(directory).isdigit() and _holds_artifacts(files):
            step_dirs.append(directory)
        if any(name.startswith(_TEMPORARY_PREFIX) for name in files):
            found.setdefault(directory, []).append("a file was still being written when its process stopped")
        if STATUS_FILE in files:
            status_roots.append(directory)
    parent = top
    for _ in range(_ANCESTORS_SEARCHED):
        parent = os.path.dirname(parent)
        if os.path.isfile(os.path.join(parent, STATUS_FILE)):
            status_roots.append(parent)
            break
        if os.path.dirname(parent) == parent:
            break
    for root in status_roots:
        _add_status(root, found, step_dirs)
    shown = (lambda d: _within(d, top)) if os.path.isdir(tree) else (lambda d: d == top)
    return [Problem(d, "; ".join(texts)) for d, texts in sorted(found.items()) if shown(d)]


def _entries(directory):
    with os.scandir(directory) as entries:
        return list(entries)


def _holds_artifacts(files):
    return dump_names.MAPPING_FILE in files or any(dump_names.parse(name) for name in files)


def _add_status(root, found, step_dirs):
    status = read(os.path.join(root, STATUS_FILE))
    if status is None:
        return
    for relative, count in (status.get("lost_steps") or {}).items():
        directory = os.path.normpath(os.path.join(root, str(relative)))
        found.setdefault(directory, []).append(f"{count} files could not be written")
    for relative in status.get("unwritten_files") or []:
        path = os.path.normpath(os.path.join(root, str(relative)))
        found.setdefault(os.path.dirname(path), []).append(f"{os.path.basename(path)} is missing rows")
    if status.get("state") == "running":
        # The writer did not finish: the newest step of each model may lack files.
        newest = {}
        for directory in step_dirs:
            model = os.path.dirname(directory)
            if _within(directory, root) and int(os.path.basename(directory)) >= int(
                os.path.basename(newest.get(model, directory))
            ):
                newest[model] = directory
        for directory in newest.values():
            found.setdefault(directory, []).append(
                f"the process writing it (pid {status.get('pid')} on {status.get('host')}) has not finished "
                "(it is still running, or was killed), so the newest step may lack files"
            )


def _within(path, top):
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)
