"""The dump root of a session, {dump_path}/{time}/{device id}: the {time} directory of this process's dumps.

``time`` is this process's first dump (YYYYmmddHHMMSS); the device id is the world's, so every rank writes its own
directory. Files go only where the user pointed: a dump_path every user can write without the sticky bit is
refused; the {time} directory is made here, and when someone else holds that name a new one
of ours ({time}.1, ...) is used instead, with a warning.
"""

import errno
import os
import secrets
import threading
import time

from npu_bridge.core.runtime import log, safe_paths
from npu_bridge.core.runtime.errors import NpuOptionError, UnsafePathError

_NUMBERED_TIME_NAMES = 9  # {time}.1 ... {time}.9 when someone else holds {time}
_RANDOM_TIME_NAMES = 16

_lock = threading.Lock()
_state = {"time": None}
_time_dirs = {}  # (dump_path, process_time()) -> the name of the {time} directory made there


def process_time():
    """The {time} directory of this process's dumps: when the first dumping session was created."""
    with _lock:
        if _state["time"] is None:
            _state["time"] = time.strftime("%Y%m%d%H%M%S")
        return _state["time"]


def session_root(dump_path, device_id, mode=0o700):
    """The dump root of a session that dumps into ``dump_path``; its {time} directory is made now.

    Args:
      dump_path: the session's dump_path option.
      device_id: the world's device id of the session.
      mode: the mode of a new {time} directory.
    Raises:
      NpuOptionError: other users could rename what the session creates in ``dump_path``.
      UnsafePathError: no {time} directory of ours could be made.
    """
    problem = safe_paths.shared_base_problem(dump_path)
    if problem is not None:
        raise NpuOptionError(
            "dump_path",
            dump_path,
            "a directory only you can write, or a shared one with the sticky bit (like /tmp)",
            problem,
        )
    return os.path.join(dump_path, time_directory(dump_path, mode), str(device_id))


def time_directory(base, mode=0o700):
    """The {time} directory of this process's dumps in ``base``, made now.

    It is ``process_time()``, or, when that name is taken by something that is not a directory of this user
    (another user pre-created it, it is a symlink or a file), a new directory of ours named ``{time}.1`` ...
    ``{time}.9``, then ``{time}.{random}``; a warning says why.

    Args:
      base: dump_path (created if missing, as given).
      mode: the mode of the new directory.
    Returns:
      The directory's name (``npu-dump`` reads any name at this level).
    """
    stamp = process_time()
    with _lock:
        if (base, stamp) in _time_dirs:
            return _time_dirs[(base, stamp)]
        refused = []
        for name in _time_names(stamp):
            path = os.path.join(base, name)
            try:
                safe_paths.make_dirs(base, name, mode=mode)
            except UnsafePathError as e:
                refused.append(e.strerror)
                continue
            except OSError:
                pass  # the writer says what is wrong when it writes
            break
        else:
            raise UnsafePathError(errno.EEXIST, f"dump: no new directory could be made in {base}: {refused[-1]}")
        if refused:
            log.logger.warning(
                "dump: %s%s; this process dumps into %s instead",
                refused[0],
                f" (and {len(refused) - 1} more names were taken)" if len(refused) > 1 else "",
                path,
            )
        _time_dirs[(base, stamp)] = name
        return name


def _time_names(stamp):
    yield stamp
    for suffix in range(1, _NUMBERED_TIME_NAMES + 1):
        yield f"{stamp}.{suffix}"
    for _ in range(_RANDOM_TIME_NAMES):  # the numbered names are predictable, and may all be taken
        yield f"{stamp}.{secrets.token_hex(4)}"
