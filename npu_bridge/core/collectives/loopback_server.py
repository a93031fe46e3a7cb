"""The gRPC protocol of a rank's collective server: one that listens on 127.0.0.1 only and serves only its user
when every rank of the job is on this machine, TensorFlow's own (every interface, anyone) otherwise.

TensorFlow's gRPC server binds ``0.0.0.0`` whatever its cluster says and authenticates nobody, so any machine that
reaches this one, and any user of this one, could run graphs in a rank. When the ranks all meet at 127.0.0.1 (a job
on one machine: ``npu-run``, a one-server rank table, ``RANK_SIZE`` / ``RANK_ID``, one host's scheduler ranks), the
library's server (``ops/runtime/loopback_server.cc``, registered here under ``PROTOCOL``) listens on 127.0.0.1
alone and closes each connection whose other end another user owns, before reading from it. Such a job needs no
warning (``exposure``).
"""

from npu_bridge.core.runtime import native_library
from npu_bridge.core.runtime.errors import CollectiveError
from npu_bridge.core.world.rank_table import LOOPBACK

PROTOCOL = "grpc+npu_bridge_loopback"
TENSORFLOW_PROTOCOL = "grpc"


def all_on_loopback(hosts):
    """True when every rank's host is 127.0.0.1: the rule for both the protocol and the warnings that name it."""
    return all(host == LOOPBACK for host in hosts)


def protocol_for(addresses):
    """Returns the ServerDef protocol for a rank of a job whose servers are at ``addresses``, registering the
    loopback server first when it is the one.

    Raises:
      CollectiveError: the library refused to register the loopback server.
    """
    if not all_on_loopback(address.rpartition(":")[0] for address in addresses):
        return TENSORFLOW_PROTOCOL
    if not native_library.c_api().npu_bridge_register_loopback_server(PROTOCOL.encode()):
        raise CollectiveError(f"npu_bridge's library did not register its loopback gRPC server ({PROTOCOL})")
    return PROTOCOL
