"""One private network for the launchers of a job whose rank table has several servers, all on this machine.

Such a table (two servers at 127.0.0.1, or at two addresses of this machine) is run by one launcher per server.
Their ranks must reach each other, and nobody else may reach them. The first launcher of the job creates the
private network (``private_network.enter``, holding every server's address on its loopback) and offers it on a
Unix socket in a directory only this user can enter; each later launcher of the same job (same job id and rank
table) connects, checks that the offer comes from a process of its own user, receives the namespaces as file
descriptors and joins them (``setns``). No port of the job is ever open in this machine's network, and another
user can neither connect to the socket (the directory is 0700) nor join the namespaces (the kernel refuses).

The first launcher keeps offering for as long as it runs; a launcher that starts after it ended makes a network
of its own, whose ranks then cannot reach the others' (they fail at ``HCCL_CONNECT_TIMEOUT``, naming the missing
ranks). ``join_or_create`` must run while the process has one thread.
"""

import contextlib
import ctypes
import ctypes.util
import fcntl
import hashlib
import os
import socket
import stat
import tempfile
import threading

from npu_bridge.core.launch import private_network
from npu_bridge.core.runtime import own_user_descriptors
from npu_bridge.core.runtime.errors import LaunchError

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_HELLO = b"npu-run private network\0"
_RECEIVE_TIMEOUT = 10.0


def rendezvous_directory(environ=None):
    """The directory where this user's launchers meet: ``$XDG_RUNTIME_DIR/npu-run`` when that is this user's
    private directory, else ``npu-run-{uid}`` in the system's temporary directory. Created 0700 if missing.

    Raises:
      LaunchError: it exists but is not a directory of this user that only this user can enter (someone else
        made it, or it is a symlink).
    """
    environ = os.environ if environ is None else environ
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and _is_private_directory(runtime):
        path = os.path.join(runtime, "npu-run")
    else:
        path = os.path.join(tempfile.gettempdir(), f"npu-run-{os.geteuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        raise LaunchError(f"cannot create {path}, where the job's launchers meet: {e.strerror}") from None
    if not _is_private_directory(path):
        raise LaunchError(
            f"{path}, where npu-run's launchers of one user meet, is not a directory of this user that only this "
            "user can enter (another user may have created it); remove it, or set XDG_RUNTIME_DIR to a private "
            "directory"
        )
    return path


def _is_private_directory(path):
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o077


def join_or_create(job_id, table_path, hosts, directory):
    """Moves this process into the job's shared private network, creating it when no launcher of the job offers one.

    Args:
      job_id: the job id (every launcher of the job has the same).
      table_path: the rank table (its real path is part of the job's identity).
      hosts: the IP addresses of every server of the table.
      directory: ``rendezvous_directory()``.
    Returns:
      (outcome, offer): a ``private_network.Outcome`` whose mechanism says "joined" when this launcher joined
      another's network; ``offer`` is an ``Offer`` to close when the job ends (None when joined or not private).
    """
    name = hashlib.sha256(f"{job_id}\0{os.path.realpath(table_path)}".encode()).hexdigest()[:24]
    socket_path = os.path.join(directory, f"{name}.sock")
    with _locked(os.path.join(directory, f"{name}.lock")):
        received = _receive(socket_path)
        if received is not None:
            _join(received)
            return private_network.Outcome(True, mechanism="joined from another launcher of the job"), None
        outcome = private_network.enter(hosts)
        if not outcome.private:
            return outcome, None
        return outcome, Offer(socket_path)


@contextlib.contextmanager
def _locked(path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _namespace_files():
    """This process's namespaces another launcher must join: its network, and its user namespace unless root."""
    kinds = ["net"] if os.geteuid() == 0 else ["user", "net"]
    return [os.open(f"/proc/self/ns/{kind}", os.O_RDONLY | os.O_CLOEXEC) for kind in kinds]


class Offer:
    """Offers this process's private network to the other launchers of its user (a thread; ``close`` ends it)."""

    def __init__(self, path):
        self._path = path
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # left by a launcher that was killed
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        self._listener.listen(16)
        self._files = _namespace_files()
        threading.Thread(
            target=own_user_descriptors.serve, args=(self._listener, _HELLO, self._files), daemon=True
        ).start()

    def close(self):
        """Stops offering the network (the socket file is removed)."""
        with contextlib.suppress(OSError):
            os.unlink(self._path)
        self._listener.close()
        for fd in self._files:
            os.close(fd)


def _receive(path):
    """The namespace descriptors offered at ``path``, or None when no launcher of the job offers any."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(_RECEIVE_TIMEOUT)
        try:
            conn.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return None
        except OSError as e:
            raise LaunchError(f"cannot reach the launcher that offers the job's network at {path}: {e}") from None
        if own_user_descriptors.peer(conn)[1] != os.geteuid():
            raise LaunchError(f"the process that offers the job's network at {path} is not of this user")
        try:
            message, fds, _, _ = socket.recv_fds(conn, len(_HELLO), 2)
        except OSError as e:
            raise LaunchError(f"the launcher that offers the job's network at {path} did not answer: {e}") from None
    if message != _HELLO or not fds:
        for fd in fds:
            os.close(fd)
        return None  # the offering launcher is ending: make a network of our own
    return fds


def _join(fds):
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    kinds = [_CLONE_NEWNET] if len(fds) == 1 else [_CLONE_NEWUSER, _CLONE_NEWNET]
    try:
        for fd, kind in zip(fds, kinds):
            if libc.setns(fd, kind) != 0:
                number = ctypes.get_errno()
                raise LaunchError(f"cannot join the job's private network: setns: {os.strerror(number)}")
    finally:
        for fd in fds:
            os.close(fd)
