"""Files land only where the user put them, and readers stay inside the tree they were given.

Every artifact tree (dumps, overflow records, exception dumps, profiles, ``npu-dump`` / ``npu-prof`` outputs) is
written through this module:

- ``make_dirs(root, *parts)``: the user-given ``root`` is taken as given (created if missing); each directory
  below it is created by this process, or, if it exists, must be a real directory (not a symlink) owned by this
  user. Another user who pre-creates the next directory of a predictable tree, or plants a symlink there, gets
  an ``UnsafePathError`` instead of our files.
- ``write_file(path, data)``: the data goes to a new file under an unpredictable name, created with
  ``O_EXCL | O_NOFOLLOW``, which is then renamed over ``path``: a symlink planted at ``path`` is replaced, never
  written through, and readers see the old file or the new one.
- ``open_dirs(root, *parts)``: as ``make_dirs``, but each directory is opened relative to its parent without
  following a symlink, and the deepest one is returned as a descriptor; ``write_file_at(dir_fd, name, data)``
  writes through it, so swapping a directory for a symlink later does not send the file elsewhere.
- ``shared_base_problem(path)``: a base directory others can write without the sticky bit (they could rename
  what we create in it) is refused by the callers when a session is created.
- ``create_new(path)``: a file written as it grows (raw profiling data, a streamed export inside a private
  temporary directory), created with ``O_EXCL | O_NOFOLLOW``: a name that exists (a planted symlink included) is
  an error, never written through.
- ``inside(root, relative, source)``: a path read from an index file (``info.json``, ``mapping.csv``) must be
  relative and stay below ``root``; with ``resolve=True`` it must not lead out of the tree through a symlink either.

Artifacts that hold tensor data are created owner-only: ``data_mode()`` is ``0o600`` unless
``NPU_BRIDGE_DATA_MODE`` widens it (for example ``640``); the umask applies on top. This module imports nothing
of TensorFlow.
"""

import errno
import os
import secrets
import stat

from npu_bridge.core.runtime.errors import EnvironmentVariableError, UnsafePathError, shortened_text

DATA_MODE_VARIABLE = "NPU_BRIDGE_DATA_MODE"
DEFAULT_DATA_MODE = 0o600
REPORT_MODE = 0o644  # reports and summaries that hold no tensor data
_ALLOWED_BITS = 0o666
_NAME_KEPT = 200  # characters of the file's name in its temporary name (NAME_MAX is 255 bytes)
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def data_mode(environ=None):
    """The mode of files that hold tensor data (dump files, ``.npy``, overflow and exception dumps).

    Args:
      environ: the environment to read (default ``os.environ``).
    Returns:
      ``NPU_BRIDGE_DATA_MODE`` as an octal file mode (default ``0o600``).
    Raises:
      EnvironmentVariableError: the variable is not 3 or 4 octal digits of read/write bits (at most ``0666``).
    """
    text = (os.environ if environ is None else environ).get(DATA_MODE_VARIABLE, "")
    if not text:
        return DEFAULT_DATA_MODE
    if not (3 <= len(text) <= 4 and all(c in "01234567" for c in text)) or int(text, 8) & ~_ALLOWED_BITS:
        raise EnvironmentVariableError(
            f"{DATA_MODE_VARIABLE}={shortened_text(text)!s}: must be an octal file mode of read and write bits, "
            "3 or 4 digits at most 0666 (e.g. 600, the default, or 640 to let the group read dumps)"
        )
    return int(text, 8)


def directory_mode(file_mode):
    """The mode of the directories that hold files of ``file_mode``: search (x) wherever read is allowed."""
    return file_mode | ((file_mode & 0o444) >> 2) | 0o700


def make_dirs(root, *parts, mode=0o700):
    """Creates ``root`` (as ``mkdir -p``) and the directories ``parts`` below it, safely.

    Args:
      root: the directory the user named; it and its parents are taken as they are.
      *parts: path components below ``root`` (each one name, or a relative path of several).
      mode: the mode of directories created below ``root`` (the umask applies).
    Returns:
      The path of the deepest directory.
    Raises:
      UnsafePathError: an existing directory below ``root`` is a symlink, not a directory, or owned by another
        user; the message names it.
      OSError: a directory cannot be created (no permission, disk full, ...).
    """
    root = os.fspath(root)
    os.makedirs(root, mode=mode, exist_ok=True)
    path = root
    for _, path in _components(root, parts):
        try:
            os.mkdir(path, mode)
        except FileExistsError:
            check_own_directory(path)
    return path


def _components(root, parts):
    """(name, path) of each directory ``parts`` name below ``root``, in order; '..' is an error."""
    path = root
    for part in parts:
        for name in os.fspath(part).split("/"):
            if name in ("", "."):
                continue
            if name == "..":
                raise UnsafePathError(errno.EINVAL, f"cannot create {shortened_text(path)}/..: '..' is not a name")
            path = os.path.join(path, name)
            yield name, path


def open_dirs(root, *parts, mode=0o700):
    """Creates ``root`` and the directories ``parts`` below it as ``make_dirs`` does, each one opened relative to
    its parent without following a symlink, and returns a descriptor of the deepest one.

    Args:
      root: the directory the user named; it and its parents are taken as they are.
      *parts: path components below ``root``.
      mode: the mode of directories created below ``root`` (the umask applies).
    Returns:
      An open descriptor (``O_DIRECTORY | O_NOFOLLOW``) the caller closes.
    Raises:
      UnsafePathError: a directory below ``root`` is a symlink, not a directory, or another user's.
      OSError: a directory cannot be created or opened.
    """
    root = os.fspath(root)
    os.makedirs(root, mode=mode, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for name, path in _components(root, parts):
            parent, fd = fd, _open_child(fd, name, path, mode)
            os.close(parent)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child(parent, name, path, mode):
    try:
        os.mkdir(name, mode, dir_fd=parent)
    except FileExistsError:
        pass
    try:
        fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            _refuse(path, os.stat(name, dir_fd=parent, follow_symlinks=False))
        raise
    try:
        _refuse(path, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_file_at(dir_fd, name, data, mode=REPORT_MODE):
    """``write_file`` of ``name`` in the open directory ``dir_fd`` (see ``open_dirs``).

    Raises:
      OSError: it could not be written; the file is left as it was and no temporary file remains.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    temporary = _temporary_name(name)
    fd = os.open(temporary, _FLAGS, mode, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=dir_fd)
        except OSError:
            pass
        raise


def shared_base_problem(path):
    """Why another user could move away what is created in the directory ``path`` (or, while it does not exist,
    in the directory it would be created in): every user may write it and it has no sticky bit.

    Returns:
      The text for an error (the directory, its mode and what to do), or None when it is safe.
    """
    directory = os.path.abspath(os.fspath(path))
    while True:
        try:
            mode = os.stat(directory).st_mode
            break
        except (FileNotFoundError, NotADirectoryError):
            if os.path.dirname(directory) == directory:
                return None
            directory = os.path.dirname(directory)
        except OSError:
            return None  # the callers' own checks say what is wrong with it
    if not stat.S_ISDIR(mode) or not mode & stat.S_IWOTH or mode & stat.S_ISVTX:
        return None
    return (
        f"{shortened_text(directory)} (mode {stat.S_IMODE(mode):04o}) can be written by every user and has no "
        "sticky bit, so another user could rename the directories written into it and put their own in their "
        f"place; run `chmod o-w {shortened_text(directory)}` (or `chmod +t` for a shared directory like /tmp), or "
        "choose a directory of your own"
    )


def check_own_directory(path):
    """Checks that ``path`` is a real directory (not a symlink) owned by this process's user.

    Raises:
      UnsafePathError: it is not; the message says what it is.
    """
    _refuse(path, os.lstat(path))


def _refuse(path, info):
    """Raises UnsafePathError unless ``info`` (not following symlinks) is a directory of this user."""
    if stat.S_ISLNK(info.st_mode):
        reason = "it is a symlink (files are never written through a link inside an artifact tree)"
    elif not stat.S_ISDIR(info.st_mode):
        reason = "it exists and is not a directory"
    elif info.st_uid != os.geteuid():
        reason = f"it belongs to user id {info.st_uid}, not to this user ({os.geteuid()}); someone else made it"
    else:
        return
    raise UnsafePathError(errno.EEXIST, f"refusing to write into {shortened_text(path)}: {reason}")


def write_file(path, data, mode=REPORT_MODE):
    """Writes ``data`` to a new file next to ``path`` and renames it over ``path``.

    The new file has an unpredictable name and is created with ``O_EXCL | O_NOFOLLOW``; the rename replaces
    whatever ``path`` was (a planted symlink included) instead of writing through it.

    Args:
      path: the file to create or replace.
      data: ``bytes`` or ``str`` (UTF-8).
      mode: its mode (the umask applies).
    Raises:
      OSError: it could not be written; ``path`` is left as it was and no temporary file remains.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open_new(path, mode) as (f, _):
        f.write(data)


def create_new(path, mode=REPORT_MODE, buffering=-1):
    """Creates ``path`` as a new file, without following a symlink, and opens it for binary writing.

    For files that are written as they grow (raw profiling data) or that are renamed into place later by their
    caller (an export's files, written inside a private temporary directory).

    Args:
      path: the file to create; it must not exist.
      mode: its mode (the umask applies).
      buffering: as for ``open``.
    Returns:
      The binary file object.
    Raises:
      FileExistsError: ``path`` exists (a file, or a symlink: it is never followed).
      OSError: it cannot be created.
    """
    fd = os.open(os.fspath(path), _FLAGS, mode)
    try:
        return os.fdopen(fd, "wb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


class open_new:  # noqa: N801 - used as a context manager, like open()
    """A context manager: a new binary file next to ``path``, renamed over ``path`` when the block ends without
    an exception (removed otherwise).

    ``with open_new(path, mode) as (f, temporary):`` gives the file object and its temporary path.
    """

    def __init__(self, path, mode=REPORT_MODE):
        self._path = os.fspath(path)
        directory, name = os.path.split(self._path)
        self._temporary = os.path.join(directory, _temporary_name(name))
        self._mode = mode
        self._file = None

    def __enter__(self):
        self._file = create_new(self._temporary, self._mode)
        return self._file, self._temporary

    def __exit__(self, kind, value, traceback):
        try:
            self._file.close()
            if kind is None:
                os.replace(self._temporary, self._path)
                return False
        except BaseException:
            _unlink(self._temporary)
            raise
        _unlink(self._temporary)
        return False


def inside(root, relative, source, resolve=False):
    """The path of ``relative`` below ``root``, for a name read from an index file.

    Args:
      root: the tree being read.
      relative: the path the index gives.
      source: the index file, for the message.
      resolve: also refuse a path that exists and leads out of ``root`` through a symlink inside the tree (``root``
        itself may be a symlink: it is what the user gave).
    Returns:
      ``os.path.join(root, relative)``.
    Raises:
      UnsafePathError: ``relative`` is not a string, is empty, absolute, has a ``..`` component or a NUL, or (with
        ``resolve``) resolves to a place outside ``root``; the message names ``source`` and the path.
    """
    if isinstance(relative, os.PathLike):
        relative = os.fspath(relative)
    text = relative if isinstance(relative, str) else repr(relative)
    parts = text.replace("\\", "/").split("/")
    if not isinstance(relative, str) or not text or text.startswith("/") or ".." in parts or "\0" in text:
        raise UnsafePathError(
            errno.EINVAL,
            f"{shortened_text(source)} names the path {shortened_text(repr(text))}, which leaves the tree "
            f"{shortened_text(root)}: paths in it must be relative and stay inside (no '/' at the start, no '..')",
        )
    path = os.path.join(root, text)
    if resolve and os.path.lexists(path):
        top, target = os.path.realpath(root), os.path.realpath(path)
        if target != top and not target.startswith(top.rstrip(os.sep) + os.sep):
            raise UnsafePathError(
                errno.EXDEV,
                f"{shortened_text(source)} names the path {shortened_text(repr(text))}, which leads out of the tree "
                f"{shortened_text(root)} through a symlink (to {shortened_text(target)}): files an index names are "
                "read only inside its tree",
            )
    return path


def _temporary_name(name):
    """An unpredictable hidden name beside ``name`` for its file while it is written."""
    return f".tmp.{secrets.token_hex(8)}.{name[:_NAME_KEPT]}"


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass
