"""File descriptors handed between processes of one user over a Unix socket (``SCM_RIGHTS``).

The job's shared-memory segment (``collectives.shm_keeper``) and npu-run's private network
(``launch.shared_private_network``) are both offered this way: the serving side hands its descriptors only to a
peer of its own user, and the receiving side takes them only from one (``SO_PEERCRED``, which the kernel fills in
and a peer cannot forge).
"""

import contextlib
import os
import socket
import struct

_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


def peer(connection):
    """(pid, uid, gid) of the process at the other end of the Unix socket ``connection``."""
    return _CREDENTIALS.unpack(connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDENTIALS.size))


def serve(listener, greeting, fds, refused=None):
    """Hands ``greeting`` with ``fds`` to every peer of this user that connects to ``listener``, until the listener
    is closed; a peer of another user gets nothing (``refused(pid, uid)`` is called, when given). A peer that goes
    away mid-answer does not stop the others."""
    own = os.geteuid()
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return  # closed
        with connection:
            pid, uid, _ = peer(connection)
            if uid != own:
                if refused is not None:
                    refused(pid, uid)
                continue
            with contextlib.suppress(OSError):
                socket.send_fds(connection, [greeting], fds)
