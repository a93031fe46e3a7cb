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

``align_point_to_point`` closes a second gap, for a key that ranks share without every run of it reaching every
one of them: the key of point-to-point runs. A rank takes the sequence from the leader on its first run with a key,
and the leader's sequence moves on with each of its own runs. In a ring of sends and receives over 4 ranks, rank 0
only meets ranks 1 and 3: it can finish its first run before rank 2 has started one, and rank 2 then takes the next
step id while ranks 1 and 3 hold the first, so their transfers with rank 2 never meet (seen as a rare hang of such a
ring under load). So every rank makes one run with that key together, before any rank runs it alone: a world
collective, which no rank finishes before every rank has taken the sequence. From then on each rank counts its own
runs.
"""

import threading

from npu_bridge.core.collectives import failures, registry
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import CollectiveError, NpuArgumentError
from npu_bridge.core.world import groups

_METHOD = "/tensorflow.WorkerService/GetStepSequence"
TIMEOUT_SECONDS = 10.0

_ALIGN_GROUP = "\0step-sequences"

_lock = threading.Lock()
_align_lock = threading.Lock()
_held = set()
_aligned = set()


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


def align_point_to_point(runtime, timeout):
    """Makes every rank take the step sequence of point-to-point runs together (see the module docstring); once
    per process, on every rank of the world before any of its runs with a send or receive.

    Args:
      runtime: this rank's ``server.Runtime`` (its ``target``, ``rank``, ``rank_size``, ``device_filter``).
      timeout: seconds to wait for the other ranks (HCCL_CONNECT_TIMEOUT).
    Raises:
      CollectiveError: not every rank took part within ``timeout``, the run failed, or collectives failed before in
        this process.
    """
    graph_key = registry.POINT_TO_POINT_GRAPH_KEY
    with _align_lock:
        if graph_key in _aligned:
            return
        if runtime.failure is not None:
            raise CollectiveError(f"{runtime.failure}\n{failures.CANNOT_RUN_AGAIN}")
        if runtime.rank == 0:
            hold(runtime.target, graph_key)
        try:
            _run_world_barrier(runtime, graph_key, timeout)
        except CollectiveError as e:
            runtime.record_failure(str(e))
            raise
        _aligned.add(graph_key)


def _run_world_barrier(runtime, graph_key, timeout):
    import tensorflow as tf
    from tensorflow.python.client import session as tf_session
    from tensorflow.python.ops import collective_ops

    members = range(runtime.rank_size)
    group_key = groups.group_key(_ALIGN_GROUP, members)
    graph = tf.Graph()
    with graph.as_default(), tf.device(f"{runtime.device_filter}/device:CPU:0"):
        barrier = collective_ops.all_reduce(
            tf.constant(1.0), runtime.rank_size, group_key, instance_key=graph_key % (2**31 - 1) + 1
        )
    config = tf.compat.v1.ConfigProto(device_filters=[runtime.device_filter])
    options = tf.compat.v1.RunOptions(timeout_in_ms=int(timeout * 1000))
    options.experimental.collective_graph_key = graph_key
    # A plain TensorFlow session: with the bridge on, every session would otherwise become a bridged one.
    session = tf_session.BaseSession.__new__(tf_session.BaseSession)
    init = getattr(tf_session.BaseSession.__init__, "__wrapped__", tf_session.BaseSession.__init__)
    init(session, runtime.target, graph, config)
    try:
        session.run(barrier, options=options)
    except tf.errors.OpError as e:
        detail = "timed out" if isinstance(e, tf.errors.DeadlineExceededError) else " ".join(e.message.split())
        raise CollectiveError(
            f"rank {runtime.rank}: the {runtime.rank_size} ranks did not all take the step sequence of their "
            f"point-to-point runs together within {timeout} s ({detail}). "
            "Every rank makes this run with its first session that runs collectives through TensorFlow; a rank "
            "that never creates one, or died, leaves the others waiting"
        ) from e
    finally:
        session.close()
