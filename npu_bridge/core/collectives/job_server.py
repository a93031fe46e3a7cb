"""The gRPC protocol of a rank's collective server: the library's server, which serves its own job alone.

TensorFlow's gRPC server binds ``0.0.0.0`` whatever its cluster says and authenticates nobody, so any machine that
reaches this one, and any user of this one, could run graphs in a rank. The library's server
(``ops/runtime/job_server.cc``, registered here under ``PROTOCOL``) is TensorFlow's with a check on every connection
it accepts, before reading from it: a connection from this machine is served when the socket at its other end is
this user's; one from another machine, when it comes from an address of one of the job's hosts. A job whose ranks
all meet at 127.0.0.1 (a job on one machine: ``npu-run``, a one-server rank table, ``RANK_SIZE`` / ``RANK_ID``,
one host's scheduler ranks) also listens on 127.0.0.1 alone. A job on one machine needs no warning (``exposure``).

Another user of one of the job's other machines connects from that machine's address too. Given the job's secret
(``vouch_with``), the servers of a job across machines therefore also vouch for each other's connections
(``ops/runtime/rank_vouching.h``): each answers, on UDP at its server's port, whether a connection is its user's,
under an HMAC keyed by the secret, and a connection from another machine is served only when a rank there vouches
for it.
"""

from npu_bridge.core.runtime import native_library
from npu_bridge.core.runtime.errors import CollectiveError

PROTOCOL = "grpc+npu_bridge_job"


def protocol():
    """Returns the ServerDef protocol of a rank's server, registering the library's server first.

    Raises:
      CollectiveError: the library refused to register it.
    """
    if not native_library.c_api().npu_bridge_register_job_server(PROTOCOL.encode()):
        raise CollectiveError(f"npu_bridge's library did not register its gRPC server ({PROTOCOL})")
    return PROTOCOL


def vouch_with(key):
    """Makes the servers started from now on vouch for their connections across machines under ``key``.

    Args:
      key: the job's vouching key (``job_secret.vouching_key``), 32 bytes.
    Raises:
      CollectiveError: the library refused the key.
    """
    if not native_library.c_api().npu_bridge_set_vouching_key(key, len(key)):
        raise CollectiveError(f"npu_bridge's library refused a vouching key of {len(key)} bytes (it takes 32)")
