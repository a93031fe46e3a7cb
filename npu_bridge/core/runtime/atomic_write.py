"""Writing a text file so that readers see the old version or the new one, never a cut one; the files users name
for output (``-o``) are written so, after refusing what is not a regular file."""

import errno
import os
import stat

from npu_bridge.core.runtime import bounded_files
from npu_bridge.core.runtime.errors import OutputFileError, shortened_text

_NAME_KEPT = 200  # characters of the file's name in its temporary file's name (NAME_MAX is 255 bytes)


def write_text(path, text):
    """Writes ``text`` (UTF-8) to a hidden temporary file next to ``path`` and renames it over ``path``.

    Args:
      path: the file to replace.
      text: its new content.
    Raises:
      OSError: the file could not be written (disk full, directory gone, ...); ``path`` is left as it was and
        no temporary file remains.
    """
    directory, name = os.path.split(os.fspath(path))
    temporary = os.path.join(directory, f".tmp.{os.getpid()}.{name[:_NAME_KEPT]}")
    try:
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def check_output(path, what="output file"):
    """Checks that ``path`` can be an output file: a regular file (replaced) or a new file in an existing directory.

    A FIFO would block the writer forever, and a device (``/dev/full``, ``/dev/null``) or a directory is not
    something to replace with a file.

    Args:
      path: the file a user named.
      what: what the file is, for the message ("result CSV", "report").
    Raises:
      OutputFileError: ``path`` is not a regular file, its directory is missing, or the name cannot be used (too
        long, under a file, a symlink loop); the message names it.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise _error(
                errno.ENOENT, path, what, f"its directory {shortened_text(directory)} does not exist"
            ) from None
        return
    except (OSError, ValueError) as e:  # ValueError: a NUL character
        raise _error(getattr(e, "errno", None), path, what, getattr(e, "strerror", None) or str(e)) from None
    if not stat.S_ISREG(mode):
        raise _error(errno.EINVAL, path, what, f"it is {bounded_files.kind_of(mode)}, not a regular file")


def write_output(path, text, what="output file"):
    """Writes a file a user named for output: checked (``check_output``), then written atomically (``write_text``)
    next to the file a symlink names.

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
        write_text(os.path.realpath(path), text)
    except OSError as e:
        raise _error(e.errno, path, what, e.strerror or str(e)) from None


def _error(number, path, what, reason):
    return OutputFileError(number, f"cannot write the {what} {shortened_text(path)}: {reason}")
