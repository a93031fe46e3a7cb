"""The job's segment for ranks started one process per rank without npu-run (srun, torchrun, mpirun, a shell loop
over ``RANK_ID`` with a rank table): the first rank of each host keeps it and hands it to the others.

npu-run gives the ranks it starts the job's memfd (``NPU_BRIDGE_SHM_FD``). Ranks started otherwise meet here. The
lowest rank of the host makes the memfd and serves it on an abstract Unix socket whose name is derived from the
user id and the job (its world's source, ``JOB_ID``, rank table, size, this host's ranks and the scheduler's job
variables), so every rank of the job on this host computes the same name and another job or user another one. It
passes the descriptor (SCM_RIGHTS) only to a process of its own user (``SO_PEERCRED``); a rank accepts it only from
a keeper of its own user. An abstract socket leaves no file and ends with its process, and the memfd ends with the
last rank that holds it, so nothing is left behind, also after SIGKILL. A rank that cannot get the segment fails
with a ``CollectiveError`` (never a silent fallback: the ranks of a group must all take the same path).

Imports no TensorFlow.
"""

import errno
import fcntl
import hashlib
import json
import os
import socket
import threading
import time

from npu_bridge.core.collectives import settings, shm_segment
from npu_bridge.core.runtime import log, own_user_descriptors
from npu_bridge.core.runtime.errors import CollectiveError

# Variables every rank of one scheduler job shares (a rank's own ones, such as SLURM_PROCID, stay out)
_JOB_VARIABLES = (
    "JOB_ID",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "TORCHELASTIC_RUN_ID",
    "MASTER_ADDR",
    "MASTER_PORT",
    "OMPI_MCA_ess_base_jobid",
    "HCCL_IF_BASE_PORT",
)
_GREETING = b"npu_bridge segment 1\n"
_RETRY = 0.05  # seconds between connection attempts while the host's first rank has not started its keeper

_lock = threading.Lock()


def socket_name(current, environ=os.environ, uid=None):
    """The abstract socket name of the keeper of ``current``'s job on this host (bytes, leading NUL)."""
    identity = {
        "uid": os.geteuid() if uid is None else uid,
        "source": current.source,
        "rank_table": current.rank_table_path,
        "size": current.rank_size,
        "server": current.server_id,
        "local": list(current.local_rank_ids),
        "job": {name: environ.get(name) for name in _JOB_VARIABLES},
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:40]
    return f"\0npu_bridge-shm-{identity['uid']}-{digest}".encode()


def needed(current, environ=os.environ):
    """True when this rank gets its segment from the host's keeper: more than one rank on this host, no
    npu-run (``NPU_BRIDGE_SHM_FD`` unset) and ``NPU_BRIDGE_COLLECTIVES`` not ``tf``."""
    return (
        len(current.local_rank_ids) > 1
        and shm_segment.FD_VARIABLE not in environ
        and shm_segment.path_choice(environ) != "tf"
    )


def available(current, environ=os.environ):
    """True when this rank has a segment (npu-run's) or gets one from the host's keeper when its collective server
    starts (``needed``): what graphs are built for, without waiting for anyone."""
    return shm_segment.descriptor(environ) is not None or needed(current, environ)


def segment(current):
    """This process's segment descriptor: npu-run's, else the host keeper's when ``needed``, else None. Called
    when the rank's collective server starts, before any collective runs.

    The host's first rank starts the keeper (at once); the other ranks wait for it up to ``HCCL_CONNECT_TIMEOUT``.
    Either way the descriptor is then named in ``os.environ['NPU_BRIDGE_SHM_FD']``, where the C++ engine and later
    calls find it.

    Raises:
      CollectiveError: the keeper did not answer in time, or the socket of this job's name is another user's.
    """
    if not needed(current, os.environ):
        return shm_segment.descriptor(os.environ)
    with _lock:
        if shm_segment.FD_VARIABLE in os.environ:  # another thread got it meanwhile
            return shm_segment.descriptor(os.environ)
        name = socket_name(current, os.environ)
        fd = _start_keeper(name) if current.rank_id == current.local_rank_ids[0] else None
        keeps = fd is not None
        if fd is None:
            fd = _receive(name, current, settings.connect_timeout())
        os.environ[shm_segment.FD_VARIABLE] = str(fd)
        log.logger.info(
            "rank %d %s the shared-memory segment of this host's ranks %s (started without npu-run)",
            current.rank_id,
            "keeps" if keeps else "received",
            list(current.local_rank_ids),
        )
        return fd


def _start_keeper(name):
    """Makes the segment and serves it on ``name`` from a thread that holds the listening socket for the process's
    life; None when the name is taken (then this rank asks its holder)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        listener.bind(name)
    except OSError as e:
        listener.close()
        if e.errno == errno.EADDRINUSE:
            return None
        raise CollectiveError(f"cannot open this host's segment keeper: {e}") from e
    try:
        fd = shm_segment.create()
    except OSError as e:
        listener.close()
        raise CollectiveError(
            f"this system gives no memfd for the shared-memory segment ({e}); set "
            f"{shm_segment.PATH_VARIABLE}=tf to use TensorFlow's collectives"
        ) from e
    listener.listen(64)
    threading.Thread(
        target=own_user_descriptors.serve,
        args=(listener, _GREETING, [fd], _refused),
        name="npu_bridge-shm-keeper",
        daemon=True,
    ).start()
    return fd


def _refused(pid, uid):
    log.warn_once(
        ("shm-keeper-refused", uid),
        "the shared-memory segment keeper refused pid %d of user %d (only user %d's ranks get it)",
        pid,
        uid,
        os.geteuid(),
    )


def _receive(name, current, timeout):
    first = current.local_rank_ids[0]
    deadline = time.monotonic() + timeout
    while True:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            connection.connect(name)
            break
        except (ConnectionRefusedError, FileNotFoundError):
            connection.close()
            if time.monotonic() >= deadline:
                raise CollectiveError(
                    f"rank {current.rank_id}: the first rank of this host (rank {first}) did not hand out the job's "
                    f"shared-memory segment within {timeout:g} s ({settings.CONNECT_TIMEOUT_VARIABLE}); start every "
                    f"rank of the job, start them with npu-run, or set {shm_segment.PATH_VARIABLE}=tf"
                ) from None
            time.sleep(_RETRY)
    with connection:
        pid, uid, _ = own_user_descriptors.peer(connection)
        if uid != os.geteuid():
            raise CollectiveError(
                f"rank {current.rank_id}: the segment keeper's socket of this job is held by pid {pid} of user {uid}, "
                f"not by a process of yours (user {os.geteuid()}); start the ranks with npu-run or set "
                f"{shm_segment.PATH_VARIABLE}=tf"
            )
        connection.settimeout(max(1.0, deadline - time.monotonic()))
        try:
            message, fds, _, _ = socket.recv_fds(connection, len(_GREETING), 1)
        except OSError as e:
            raise CollectiveError(f"rank {current.rank_id}: the segment keeper (pid {pid}) did not answer: {e}") from e
    if message != _GREETING or len(fds) != 1 or not (shm_segment.seals(fds[0]) or 0) & fcntl.F_SEAL_SHRINK:
        for fd in fds:
            os.close(fd)
        raise CollectiveError(
            f"rank {current.rank_id}: pid {pid} answered on the segment keeper's socket without a segment"
        )
    os.set_inheritable(fds[0], False)
    return fds[0]
