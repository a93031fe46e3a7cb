"""Writing a text file so that readers see the old version or the new one, never a cut one; the files users name
for output (``-o``) are written so, after refusing what is not a regular file.

The new content goes to a file under an unpredictable name created without following symlinks
(``safe_paths.open_new``), which is renamed over the path itself: a symlink at the output name is replaced by the
file, never written through, and the file it pointed to is left as it was.
"""

import errno
import os
import stat

from npu_bridge.core.runtime import bounded_files, safe_paths
from npu_bridge.core.runtime.errors import OutputFileError, shortened_text

_SYSTEM_DIRECTORIES = ("/dev", "/proc")  # their symlinks (/dev/stdout, /dev/fd/N) are never replaced


def write_text(path, text, mode=safe_paths.REPORT_MODE):
    """Writes ``text`` (UTF-8) to a new hidden file next to ``path`` and renames it over ``path``.

    A symlink at ``path`` is replaced, not followed.

    Args:
      path: the file to replace.
      text: its new content.
      mode: the file's mode (default ``0o644``; the umask applies).
    Raises:
      OSError: the file could not be written (disk full, directory gone, ...); ``path`` is left as it was and
        no temporary file remains.
    """
    safe_paths.write_file(path, text, mode)


def check_output(path, what="output file"):
    """Checks that ``path`` can be an output file: a regular file (replaced) or a new file in an existing directory.

    A FIFO would block the writer forever, and a device (``/dev/full``, ``/dev/null``) or a directory is not
    something to replace with a file. A symlink at ``path`` is replaced by the file, never written through, whatever
    it points to (a regular file, nothing, a FIFO, a device); only the links of ``/dev`` and ``/proc``
    (``/dev/stdout``, ``/dev/fd/1``) are refused: they are the system's, and replacing them would not send the
    output where the user meant.

    Args:
      path: the file a user named.
      what: what the file is, for the message ("result CSV", "report").
    Raises:
      OutputFileError: ``path`` is not a regular file, its directory is missing, or the name cannot be used (too
        long, under a file, a symlink loop among its directories); the message names it.
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise _error(
                errno.ENOENT, path, what, f"its directory {shortened_text(directory)} does not exist"
            ) from None
        return
    except (OSError, ValueError) as e:  # ValueError: a NUL character
        raise _error(getattr(e, "errno", None), path, what, getattr(e, "strerror", None) or str(e)) from None
    if stat.S_ISLNK(mode):
        directory = os.path.realpath(os.path.dirname(os.path.abspath(path)))
        if any(directory == system or directory.startswith(system + os.sep) for system in _SYSTEM_DIRECTORIES):
            raise _error(
                errno.EINVAL,
                path,
                what,
                f"it is a symlink in {directory}, which is the system's (a file is written in place of a link, not "
                "through it); name a file",
            )
        return
    if not stat.S_ISREG(mode):
        raise _error(errno.EINVAL, path, what, f"it is {bounded_files.kind_of(mode)}, not a regular file")


def write_output(path, text, what="output file"):
    """Writes a file a user named for output: checked (``check_output``), then written atomically (``write_text``)
    over the path itself (a symlink there is replaced, and what it pointed to is left as it was).

    Args:
      path: the file.
      text: its content.
      what: what the file is, for messages.
    Raises:
      OutputFileError: ``path`` cannot be an output file, or writing it failed (the message names it; the file is
        left as it was).
    """
    check_output(path, what)
    try:
        write_text(path, text)
    except OSError as e:
        raise _error(e.errno, path, what, e.strerror or str(e)) from None


def _error(number, path, what, reason):
    return OutputFileError(number, f"cannot write the {what} {shortened_text(path)}: {reason}")
