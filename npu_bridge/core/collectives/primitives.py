"""The TensorFlow collective ops that every HCCL operation lowers to, with keys, timeout and bookkeeping.

Which op variants: V1 ``CollectiveReduce``, ``CollectiveGather`` and ``CollectiveBcastSend/Recv`` (their
instance key is an attribute, so TensorFlow keeps ranks' step ids in sync itself, also when some ranks run
more steps than others) and ``CollectiveAllToAllV2`` (the only all-to-all; its runs need a
``collective_graph_key``, which the session step supplies). They are placed on the host CPU; on the gpu backend
(``device_target``) on the GPU with ``communication_hint="nccl"``, so TensorFlow moves GPU tensors through NCCL
as its own multi-worker GPU collectives do (``_where``). They carry a timeout (see ``_timeout_bound``; the
NpuOptimizer pass sets the session's own), are marked with ``pass_contract.COLLECTIVE_GROUP_ATTR`` and registered
in ``registry``.

Groups whose ranks are all on this host run on the job's shared-memory segment instead (``shm_primitives``, the
C++ ``HcomShm*`` ops, for host tensors: not on the gpu backend unless ``NPU_BRIDGE_COLLECTIVES=shm``), with the
same keys, timeout, marking and registration; ``NPU_BRIDGE_COLLECTIVES=tf`` keeps them on TensorFlow's; a send /
receive uses a one-way group of its own there (``segment_members``). A reduction over a group that spans hosts
with several members on each goes by host (``hierarchy``): through the segment within each host, TensorFlow's
collective across hosts on the host's share; so does an all-gather, across hosts first. Reduce-scatter exists
only on the segment.

Callers pass tensors of a dtype the op supports (see ``transport``) and groups of at least two ranks.
"""

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2

from npu_bridge.core.collectives import hierarchy, keys, registry, settings, shm_primitives
from npu_bridge.core.device import device_target
from npu_bridge.core.plan.pass_contract import COLLECTIVE_GROUP_ATTR
from npu_bridge.core.runtime import op_sites

DEVICE = "/device:CPU:0"
GPU_DEVICE = "/device:GPU:0"
REDUCE_DTYPES = (tf.bfloat16, tf.float16, tf.float32, tf.float64, tf.int32, tf.int64)
GATHER_DTYPES = (tf.float16, tf.float32, tf.float64, tf.int32, tf.int64)
BROADCAST_DTYPES = (tf.bool, tf.float16, tf.float32, tf.float64, tf.int32, tf.int64)
ALL_TO_ALL_DTYPES = REDUCE_DTYPES


def _timeout_bound():
    """The timeout a collective op is built with; it only counts in sessions that are not bridged.

    The plan of a bridged session decides its collectives' timeout (hccl_timeout / HCCL_EXEC_TIMEOUT) and the
    NpuOptimizer pass stamps it on every collective the session runs, whatever the op was built with. A session
    that is not bridged runs no pass, and there a collective waits forever for a group its peers never join
    (tests/collectives/test_collectives_runtime.py runs one on two ranks), so the op keeps HCCL_EXEC_TIMEOUT (default
    1836 s) as the bound of that case. The process's init options play no part: they belong to sessions.
    """
    return settings.exec_timeout()


def _where(place=None):
    """(device, communication hint) of a collective: the host CPU for the segment's ops (``place`` not None); for
    TensorFlow's, the GPU and NCCL on the gpu backend, else the host CPU and TensorFlow's choice (its ring)."""
    if place is None and device_target.process_target() == "gpu":
        return GPU_DEVICE, "nccl"
    return DEVICE, "auto"


def _segment(members):
    """The group's place on the shared-memory segment, or None (GPU tensors take NCCL unless shm was asked for)."""
    return shm_primitives.placement(members, host_tensors=_where()[0] == DEVICE)


def _register(tensor, kind, members, key, needs_graph_key=False, part_of=None):
    """Marks and registers a collective op; ``part_of``: the group of a collective going by host that it is a step
    of (registered with that group's ranks: the collective waits for all of them)."""
    tensor.op._set_attr(COLLECTIVE_GROUP_ATTR, attr_value_pb2.AttrValue(s=members.group.encode()))
    data = tensor.op.inputs[0] if tensor.op.inputs else tensor  # what this rank puts in (a receiver: gets)
    info = registry.CollectiveInfo(
        kind,
        members.group,
        (part_of or members).ranks,
        key,
        needs_graph_key,
        shape=str(data.shape.as_list()) if data.shape.rank is not None else "(unknown shape)",
        dtype=data.dtype.name,
        site=op_sites.creation_site(tensor.op),
        by_host=part_of is not None,
        on_segment=tensor.op.type.startswith("HcomShm"),
    )
    registry.record(tensor.op, info)
    return tensor


def all_reduce(x, members, merge_op, kind="allreduce", part_of=None):
    """Element-wise reduction over the group; every member gets the result.

    Args:
      x: a tensor of a ``REDUCE_DTYPES`` type.
      members: the group's ``Members``.
      merge_op: "Add", "Mul", "Max" or "Min".
      kind: the upstream operation name for error messages and the registry.
      part_of: see ``_register``.
    """
    key = keys.instance_key(members.key)
    place = _segment(members)
    device, hint = _where(place)
    empty = x.shape.num_elements() == 0  # nothing to split: one collective
    by_host = hierarchy.split(members, host_tensors=device == DEVICE) if place is None and not empty else None
    if by_host is not None:
        return _all_reduce_by_host(x, members, by_host, merge_op, kind)
    with tf.device(device):
        if place is not None:
            y = shm_primitives.all_reduce(x, place, merge_op, key, _timeout_bound())
            return _register(y, kind, members, key, part_of=part_of)
        y = tf.raw_ops.CollectiveReduce(
            input=x,
            group_size=members.size,
            group_key=members.key,
            instance_key=key,
            merge_op=merge_op,
            final_op="Id",
            subdiv_offsets=[0],
            communication_hint=hint,
            timeout_seconds=_timeout_bound(),
            name="HcomAllReduce",
        )
    return _register(y, kind, members, key, part_of=part_of)


def _all_reduce_by_host(x, members, by_host, merge_op, kind):
    """``all_reduce`` of a group that spans hosts (``hierarchy``): this host's share of the flattened tensor (padded
    to a multiple of the host's members) through the segment, the shares across hosts through TensorFlow, then
    the whole back through the segment."""
    scatter = by_host.scatter
    with tf.device(DEVICE):
        flat = tf.reshape(x, [-1])
        count = tf.size(flat)
        padded = tf.pad(flat, [[0, (scatter.size - count % scatter.size) % scatter.size]])
        share = reduce_scatter(padded, scatter, merge_op, keys.instance_key(scatter.key), kind, members)
        share = all_reduce(share, by_host.peers, merge_op, kind, members)
        whole = all_gather(share, by_host.gather, kind, members)
        y = tf.reshape(whole[:count], tf.shape(x))
    y.set_shape(x.shape)
    return y


def reduce_scatter(x, members, merge_op, key, kind="reduce_scatter", part_of=None):
    """Slice ``members.rank`` (of ``members.size`` along dimension 0) of the reduction of ``x`` over the group, on
    the shared-memory segment; None when the group does not run there (TensorFlow has no CPU reduce-scatter:
    the caller then exchanges with ``all_to_all``).

    Args:
      x: a tensor of a ``REDUCE_DTYPES`` type whose dimension 0 the group size divides.
      key: the instance key the caller took for this collective.
    """
    place = _segment(members)
    if place is None:
        return None
    with tf.device(DEVICE):
        y = shm_primitives.reduce_scatter(x, place, merge_op, key, _timeout_bound())
    return _register(y, kind, members, key, part_of=part_of)


def all_gather(x, members, kind="allgather", part_of=None):
    """Concatenates every member's ``x`` along dimension 0, in group-rank order (same shape everywhere)."""
    place = _segment(members)
    device, hint = _where(place)
    by_host = hierarchy.split(members, host_tensors=device == DEVICE) if place is None and part_of is None else None
    if by_host is not None:
        return _all_gather_by_host(x, members, by_host, kind)
    key = keys.instance_key(members.key)
    with tf.device(device):
        if place is not None:
            y = shm_primitives.all_gather(x, place, key, _timeout_bound())
        else:
            y = tf.raw_ops.CollectiveGather(
                input=x,
                group_size=members.size,
                group_key=members.key,
                instance_key=key,
                shape=x.shape,
                communication_hint=hint,
                timeout_seconds=_timeout_bound(),
                name="HcomAllGather",
            )
    if x.shape.rank is not None:
        first = None if x.shape[0] is None else x.shape[0] * members.size
        y.set_shape([first] + x.shape.as_list()[1:])
    return _register(y, kind, members, key, part_of=part_of)


def _all_gather_by_host(x, members, by_host, kind):
    """``all_gather`` of a group that spans hosts (``hierarchy``): across hosts among the members with this place,
    then those blocks through the segment among this host's members, put in group-rank order."""
    with tf.device(DEVICE):
        across = all_gather(x, by_host.peers, kind, part_of=members)
        blocks = all_gather(across, by_host.gather, kind, part_of=members)
        shape = tf.shape(x)
        stacked = tf.reshape(blocks, tf.concat([[members.size], shape], 0))
        ordered = tf.gather(stacked, by_host.order)
        y = tf.reshape(ordered, tf.concat([[members.size * shape[0]], shape[1:]], 0))
    if x.shape.rank is not None:
        first = None if x.shape[0] is None else x.shape[0] * members.size
        y.set_shape([first] + x.shape.as_list()[1:])
    return y


def broadcast_send(x, members, key, kind="broadcast", root=None, segment_members=None, part_of=None):
    """The root's side of a broadcast: sends ``x`` (fully defined shape) and returns it.

    Args:
      root: this rank's group rank when the broadcast may run on the segment or by host; None: TensorFlow's op.
      segment_members: the ``Members`` the segment uses instead of ``members`` (a send's one-way group).
      part_of: see ``_register``.
    """
    place = None if root is None else _segment(segment_members or members)
    device, hint = _where(place)
    by_host = _broadcast_split(members, root, place, segment_members, part_of, device)
    if by_host is not None:
        return _broadcast_by_host(x, x.shape, x.dtype, members, by_host, root, kind)
    with tf.device(device):
        if place is not None:
            y = shm_primitives.broadcast_send(x, place, key, _timeout_bound())
            return _register(y, kind, members, key, part_of=part_of)
        y = tf.raw_ops.CollectiveBcastSend(
            input=x,
            group_size=members.size,
            group_key=members.key,
            instance_key=key,
            shape=x.shape,
            communication_hint=hint,
            timeout_seconds=_timeout_bound(),
            name="HcomBroadcastSend",
        )
    return _register(y, kind, members, key, part_of=part_of)


def broadcast_recv(shape, dtype, members, key, kind="broadcast", root=None, segment_members=None, part_of=None):
    """A non-root member's side of a broadcast: receives a tensor of ``shape`` and ``dtype``.

    Args:
      root: the sender's group rank when the broadcast may run on the segment or by host; None: TensorFlow's op.
      segment_members: the ``Members`` the segment uses instead of ``members`` (a receive's one-way group).
      part_of: see ``_register``.
    """
    place = None if root is None else _segment(segment_members or members)
    device, hint = _where(place)
    by_host = _broadcast_split(members, root, place, segment_members, part_of, device)
    if by_host is not None:
        return _broadcast_by_host(None, shape, dtype, members, by_host, root, kind)
    with tf.device(device):
        if place is not None:
            y = shm_primitives.broadcast_recv(shape, dtype, place, root, key, _timeout_bound())
            return _register(y, kind, members, key, part_of=part_of)
        y = tf.raw_ops.CollectiveBcastRecv(
            T=dtype,
            group_size=members.size,
            group_key=members.key,
            instance_key=key,
            shape=shape,
            communication_hint=hint,
            timeout_seconds=_timeout_bound(),
            name="HcomBroadcastRecv",
        )
    return _register(y, kind, members, key, part_of=part_of)


def _broadcast_split(members, root, place, segment_members, part_of, device):
    """The ``hierarchy.Split`` of a broadcast that goes by host, else None (a one-way route, a step of another
    collective, TensorFlow's op asked for, or the segment alone)."""
    if root is None or place is not None or segment_members is not None or part_of is not None:
        return None
    return hierarchy.split(members, host_tensors=device == DEVICE)


def _broadcast_by_host(x, shape, dtype, members, by_host, root, kind):
    """A broadcast from group rank ``root`` over a group that spans hosts (``hierarchy``): TensorFlow's broadcast
    across hosts among the members with the root's place, then the segment's from that place on each host.
    ``x``: the root's tensor; None elsewhere. Returns what this member holds afterwards."""
    root_place = by_host.place_of(members.ranks[root])
    local = by_host.gather
    if local.rank != root_place:
        return broadcast_recv(shape, dtype, local, keys.instance_key(local.key), kind, root=root_place, part_of=members)
    peers = by_host.peers
    key = keys.instance_key(peers.key)
    if x is None:
        x = broadcast_recv(shape, dtype, peers, key, kind, part_of=members)
    else:
        x = broadcast_send(x, peers, key, kind, part_of=members)  # its output is x, once sent
    return broadcast_send(x, local, keys.instance_key(local.key), kind, root=root_place, part_of=members)


def all_to_all(x, members, instance_key, block_key, kind):
    """Member i sends ``x[j]`` to member j and receives member j's ``x[i]`` as row j of the result.

    Args:
      x: a tensor whose dimension 0 equals the group size, of an ``ALL_TO_ALL_DTYPES`` type.
      members: the group's ``Members``.
      instance_key: the instance key, an int or an int32 scalar tensor (size-bucketed exchanges).
      block_key: the static key recorded for the op (equal to ``instance_key`` when that is an int).
      kind: the upstream operation name.
    """
    place = _segment(members)
    device, hint = _where(place)
    with tf.device(device):
        if place is not None:  # the leader orders the group's collectives: the static key is enough
            return _register(shm_primitives.all_to_all(x, place, block_key, _timeout_bound()), kind, members, block_key)
        y = tf.raw_ops.CollectiveAllToAllV2(
            input=x,
            group_size=members.size,
            group_key=members.key,
            instance_key=instance_key,
            ordering_token=[],
            communication_hint=hint,
            timeout_seconds=_timeout_bound(),
            name="HcomAllToAll",
        )
    y.set_shape(x.shape)
    return _register(y, kind, members, block_key, needs_graph_key=True)
