"""Runs a command (as root) in a mount namespace of its own in which the given paths can be reached by any user.

Usage (as root): user_view.py PATH [PATH ...] -- COMMAND [ARGS ...]

A test that drops to an unprivileged user needs that user to run the interpreter, the virtualenv and the
checkout, which may sit below directories others cannot enter (root's 0700 home, a 0700 temporary directory).
Instead of changing their modes on the machine, each such directory is covered, in this namespace only, by an
empty world-enterable tmpfs into which the entries the paths need are bind-mounted back; nothing else of it can
be seen. The rest of the file system is shared. Then COMMAND (typically ``setpriv ... --``) is executed.
"""

import ctypes
import os
import stat
import sys

_CLONE_NEWNS = 0x00020000
_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_PRIVATE = 1 << 18
_ROUNDS = 16


def _mount(libc, source, target, fstype, flags, data=None):
    encoded = [None if v is None else v.encode() for v in (source, target, fstype, data)]
    if libc.mount(encoded[0], encoded[1], encoded[2], flags, encoded[3]) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"mount {source} on {target}: {os.strerror(number)}")


def _closed_ancestors(paths):
    """{directory others cannot enter: the names below it that the paths need}, shallowest directories only."""
    closed = {}
    for path in paths:
        parts = os.path.abspath(path).strip("/").split("/")
        current = "/"
        for name in parts:
            if not os.stat(current).st_mode & stat.S_IXOTH:
                closed.setdefault(current, set()).add(name)
                break
            current = os.path.join(current, name)
    return closed


def _open_up(libc, directory, names):
    handles = {name: os.open(os.path.join(directory, name), os.O_PATH) for name in names}
    _mount(libc, "tmpfs", directory, "tmpfs", 0, "mode=755,size=64k")
    for name, handle in handles.items():
        target = os.path.join(directory, name)
        if stat.S_ISDIR(os.fstat(handle).st_mode):
            os.mkdir(target)
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
        _mount(libc, f"/proc/self/fd/{handle}", target, None, _MS_BIND | _MS_REC)
        os.close(handle)


def main(argv):
    split = argv.index("--")
    paths, command = argv[:split], argv[split + 1 :]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
    real = [os.path.realpath(p) for p in paths] + list(paths)
    for _ in range(_ROUNDS):  # a directory bound back may itself be closed: open that one next round
        closed = _closed_ancestors(real)
        if not closed:
            break
        for directory, names in sorted(closed.items()):
            _open_up(libc, directory, names)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
