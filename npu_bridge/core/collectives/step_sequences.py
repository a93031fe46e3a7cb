"""Makes rank 0 hold the step sequence of a collective graph key before its first run with it.

In a multi-worker TensorFlow job every run with collectives takes its step id from a sequence per collective
graph key, and the group leader (rank 0, ``server.LEADER_DEVICE``) holds the sequences: another rank asks the
leader for the sequence of a key it has not run before (the leader makes one, at a random start, when it has
none), the leader uses its own. But the leader, on its own first run with a key, looks the key up and, not
finding it, then makes a sequence at a new random start even when another rank asked for one in between, and
replaces it. That rank and the leader then disagree on the step id, and their collectives wait for each other
until the timeout (seen as a rare hang of the first run of a key while another rank was quick to ask).

``hold`` closes that gap: before rank 0's first run with a key, it asks its own server for the key's sequence as
any other rank would, which makes the sequence without ever replacing one. Rank 0 then finds it, as every other
rank does.
"""

import threading

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError

_METHOD = "/tensorflow.WorkerService/GetStepSequence"
TIMEOUT_SECONDS = 10.0

_lock = threading.Lock()
_held = set()


def _varint(value):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def request_bytes(graph_key):
    """A serialized ``GetStepSequenceRequest`` for one graph key (field 1, ``repeated int64 graph_key``)."""
    if not 0 < graph_key < 2**63:
        raise NpuArgumentError(f"graph key {graph_key} is not a positive int64")
    return b"\x08" + _varint(graph_key)


def hold(target, graph_key):
    """Makes the leader's server at ``target`` ("grpc://host:port", this process's own) hold ``graph_key``'s
    sequence; once per key and process. A failed request is logged and left: the run then goes as without it."""
    if graph_key in _held:  # every run of rank 0 asks: no lock on this path
        return
    import grpc  # TensorFlow's own dependency

    address = target.decode() if isinstance(target, bytes) else target
    try:
        with grpc.insecure_channel(address.removeprefix("grpc://")) as channel:
            channel.unary_unary(_METHOD)(request_bytes(graph_key), timeout=TIMEOUT_SECONDS)
    except grpc.RpcError as e:
        log.logger.debug("could not hold the step sequence of graph key %d at %s: %s", graph_key, address, e)
        return
    with _lock:
        _held.add(graph_key)
