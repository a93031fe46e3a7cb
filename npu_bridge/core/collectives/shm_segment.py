"""The job's shared-memory segment: made by npu-run, found by ranks, and which collective path a job takes.

npu-run makes one anonymous memfd per job (``create``: nothing in /dev/shm, gone with the last process that holds
it, also after SIGKILL) and passes it to the ranks it starts, naming its descriptor in ``NPU_BRIDGE_SHM_FD``. The
C++ engine (ops/runtime/shm_segment.h) sizes and lays it out. ``NPU_BRIDGE_COLLECTIVES`` picks the path: ``auto``
(default: the segment for groups whose ranks are all on this host, TensorFlow's gRPC collectives otherwise),
``shm`` (the segment, an error where it cannot be used), ``tf`` (TensorFlow's collectives always).

Imports no TensorFlow: npu-run uses it.
"""

import fcntl
import os

from npu_bridge.core.runtime import env_choice

FD_VARIABLE = "NPU_BRIDGE_SHM_FD"
PATH_VARIABLE = "NPU_BRIDGE_COLLECTIVES"
PATHS = ("auto", "shm", "tf")
MEMFD_NAME = "npu_bridge-collectives"  # ops/runtime/shm_segment.h kMemfdName: the engine checks it


def create():
    """Makes the job's segment: an empty memfd that can grow but not shrink; returns its descriptor (close-on-exec:
    pass it to the ranks with ``pass_fds``).

    Raises:
      OSError: the system has no memfd (then the job runs on TensorFlow's collectives).
    """
    fd = os.memfd_create(MEMFD_NAME, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
    except OSError:
        os.close(fd)
        raise
    return fd


def path_choice(environ=os.environ):
    """Returns ``NPU_BRIDGE_COLLECTIVES``: "auto" (also when unset), "shm" or "tf".

    Raises:
      EnvironmentVariableError: another value.
    """
    return env_choice.one_of(
        environ, PATH_VARIABLE, PATHS, "auto: shared memory for groups on one host, else TensorFlow's collectives"
    )


def descriptor(environ=os.environ):
    """Returns the segment's descriptor when ``NPU_BRIDGE_SHM_FD`` names npu-run's memfd, else None.

    A process a rank starts may inherit the variable without the descriptor (and the number then names another
    file, or none): that process simply has no segment.
    """
    text = environ.get(FD_VARIABLE, "").strip()
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        return None
    fd = int(text)
    return fd if seals(fd) is not None else None


def seals(fd):
    """The seals (``fcntl.F_SEAL_*`` bits) of ``fd`` when it is a memfd named as the job's segment, else None."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
        found = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
    except OSError:
        return None
    return found if target.startswith(f"/memfd:{MEMFD_NAME}") else None
