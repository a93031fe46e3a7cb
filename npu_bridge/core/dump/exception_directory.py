"""Where a session's exception dumps go (enable_exception_dump=1), checked when the session is created.

The directory follows CANN's default layout, {NPU_COLLECT_PATH or ASCEND_WORK_PATH or the current directory}/
extra-info/data-dump/{device id}; the dump writer creates it only when an op fails.
"""

import os
import stat

from npu_bridge.core.runtime import safe_paths
from npu_bridge.core.runtime.errors import NpuOptionError, shortened_text

EXCEPTION_DIR_VARIABLES = ("NPU_COLLECT_PATH", "ASCEND_WORK_PATH")  # the first one set wins
_EXCEPTION_LAYOUT = ("extra-info", "data-dump")  # {base}/extra-info/data-dump/{device id}
_PATH_MAX = 4096  # bytes of a path, with its terminating NUL (Linux)
_NAME_MAX = 255  # bytes of one name in a path


def exception_dir(device_id, environ=None):
    """Where exception dumps go: {NPU_COLLECT_PATH or ASCEND_WORK_PATH or the current directory}/
    extra-info/data-dump/{device id}, following CANN's default layout (an empty variable counts as unset).

    The directory is created only when an op fails, so it is checked here, when the session is created: it must
    exist or be creatable (what exists of it is a writable directory, no part is a file, FIFO, device or symlink
    loop), its path must fit the system's limits (PATH_MAX, NAME_MAX) and be UTF-8 (the dump writer's paths are).

    Raises:
      NpuOptionError: the directory cannot be used; the error names the variable that chose it.
    """
    environ = os.environ if environ is None else environ
    name = next((variable for variable in EXCEPTION_DIR_VARIABLES if environ.get(variable)), None)
    if name is None:
        try:
            base = os.getcwd()
        except OSError as e:  # the current directory was removed
            raise _unset_base_error(f"the current directory cannot be used: {e.strerror}") from None
    else:
        base = environ[name]
    directory = os.path.join(os.path.abspath(base), *_EXCEPTION_LAYOUT, str(device_id))
    problem = _directory_problem(directory) or safe_paths.shared_base_problem(base)
    if problem is None:
        return directory
    if name is None:
        raise _unset_base_error(problem)
    raise NpuOptionError(
        name,
        base,
        "a writable directory, or a path where one can be created, in UTF-8 (exception dumps go to "
        "{path}/extra-info/data-dump/{device id})",
        f"the environment variable sets where exception dumps go (enable_exception_dump=1), but {problem}",
    )


def exception_base(directory):
    """The base an ``exception_dir`` result lies in (NPU_COLLECT_PATH, ASCEND_WORK_PATH or the working
    directory, made absolute): it is taken as given, the directories below it are the writer's or refused."""
    for _ in range(len(_EXCEPTION_LAYOUT) + 1):
        directory = os.path.dirname(directory)
    return directory


def _unset_base_error(problem):
    return NpuOptionError(
        "enable_exception_dump",
        1,
        "set NPU_COLLECT_PATH or ASCEND_WORK_PATH to a writable directory, or run in one",
        f"exception dumps go under the current directory when NPU_COLLECT_PATH and ASCEND_WORK_PATH are unset, "
        f"but {problem}",
    )


def _directory_problem(directory):
    """Why exception dumps cannot be written to ``directory`` (absolute), or None when they can."""
    try:
        encoded = directory.encode("utf-8")
    except UnicodeEncodeError:
        return "the path is not valid UTF-8"
    if "\x00" in directory:
        return "the path holds a NUL character"
    if len(encoded) >= _PATH_MAX:
        return (
            f"the dump directory {shortened_text(directory)} would be {len(encoded)} bytes long, too long for "
            f"the system (at most {_PATH_MAX - 1})"
        )
    longest = max(directory.split(os.sep), key=lambda part: len(part.encode("utf-8")))
    if len(longest.encode("utf-8")) > _NAME_MAX:
        return f"the name {shortened_text(longest)} in the path is longer than {_NAME_MAX} bytes"
    path = directory
    while True:
        try:
            mode = os.stat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):  # created when needed; a file in the way is found above
            path = os.path.dirname(path)
            continue
        except OSError as e:  # a symlink loop, no permission to look
            return f"{shortened_text(path)} cannot be used: {e.strerror}"
        if not stat.S_ISDIR(mode):
            return f"{shortened_text(path)} is not a directory ({_kind(mode)})"
        if not os.access(path, os.W_OK | os.X_OK):
            what = "the dump directory" if path == directory else "the directory to create it in"
            return f"{what} {shortened_text(path)} is not writable"
        return None


def _kind(mode):
    for test, text in ((stat.S_ISREG, "a file"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return text
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a special file"
