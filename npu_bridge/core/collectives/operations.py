"""``npu_bridge.hccl.hccl_ops``: upstream's HCCL graph operations, validated, lowered to TF collectives.

Every function builds graph ops (call it while building the graph, on every rank alike: SPMD) and raises at
once for a bad argument: ``NpuArgumentTypeError`` (a ``TypeError``) for a dtype HCCL does not support,
``NpuArgumentError`` (a ``ValueError``) for everything else, each naming the argument, the value and what is
allowed. Ranks (``root_rank``, ``dest_rank``, ``src_rank``) are group ranks. Before the NPU system is initialized
only the world group exists.

Differences from Ascend (see docs/fidelity.md): ``fusion`` / ``fusion_id`` are validated but each call is its own
collective (the distributed optimizers fuse gradients themselves); ``reduce`` leaves the result on every
rank, not only on the root. The remote-memory operations are in ``remote_memory`` (not supported off the NPU).

As on Ascend, where HCCL writes into its input buffers, ``broadcast`` writes the root's values into the
variables passed to it (``variable_write_back``); other inputs are not changed.
"""

import tensorflow as tf

from npu_bridge.core.collectives import (
    all_to_all,
    keys,
    lowering,
    membership,
    primitives,
    transport,
    variable_write_back,
)
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.world.groups import WORLD_GROUP

REDUCTIONS = ("sum", "prod", "max", "min")
REDUCE_DTYPES = (tf.int8, tf.int16, tf.int32, tf.int64, tf.float16, tf.float32, tf.bfloat16)
DATA_DTYPES = (
    tf.int8,
    tf.int16,
    tf.int32,
    tf.int64,
    tf.uint8,
    tf.uint16,
    tf.uint32,
    tf.uint64,
    tf.float16,
    tf.float32,
    tf.float64,
    tf.bfloat16,
)


def _names(dtypes):
    return ", ".join(d.name for d in dtypes)


def check_tensor(api, name, value, dtypes):
    """Returns ``value`` as a tensor.

    Raises:
      TypeError: its dtype is not in ``dtypes``; the message names ``api``, ``name`` and the allowed dtypes.
    """
    tensor = tf.convert_to_tensor(value)
    if tensor.dtype.base_dtype not in dtypes:
        raise NpuArgumentTypeError(
            f"{api}: {name} has dtype {tensor.dtype.name}, which HCCL does not support here; allowed: {_names(dtypes)}"
        )
    return tensor


def _int(api, name, value, low=None, high=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise NpuArgumentError(f"{api}: {name} must be a python int, got {type(value).__name__} {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise NpuArgumentError(f"{api}: {name}={value} is out of range; it must be {bounds}")
    return value


def _reduction(api, reduction):
    if reduction not in REDUCTIONS:
        raise NpuArgumentError(
            f"{api}: reduction {reduction!r} is not supported; allowed: {', '.join(repr(r) for r in REDUCTIONS)}"
        )
    return reduction


def check_fusion(api, fusion, fusion_id, allowed):
    """Validates ``fusion`` (one of ``allowed``) and ``fusion_id`` (int >= -1).

    Raises:
      ValueError: naming ``api``, the value and what is allowed.
    """
    if fusion not in allowed or isinstance(fusion, bool):
        raise NpuArgumentError(
            f"{api}: fusion={fusion!r} is not supported; allowed: {', '.join(map(str, allowed))} "
            "(0: no fusion, 1: by the gradient split strategy, 2: by fusion_id)"
        )
    _int(api, "fusion_id", fusion_id, -1)


def check_group_rank(api, name, value, members):
    """Returns ``value`` after checking it is a group rank (int in [0, group size)) of ``members``.

    Raises:
      ValueError: naming ``api``, ``name``, the value and the allowed range.
    """
    _int(api, name, value)
    if not 0 <= value < members.size:
        raise NpuArgumentError(
            f"{api}: {name}={value} is not a rank of group {members.group!r}, which has ranks 0..{members.size - 1}"
        )
    return value


def allreduce(tensor, reduction, fusion=1, fusion_id=-1, group=WORLD_GROUP):
    """Reduces ``tensor`` element-wise over the ranks of ``group``; every rank gets the result.

    Args:
      tensor: a tensor of int8, int16, int32, int64, float16, float32 or bfloat16, the same shape on every rank.
      reduction: "sum", "prod", "max" or "min".
      fusion: 0, 1 or 2 (accepted; see the module docstring).
      fusion_id: int >= -1.
      group: the group name.
    Returns:
      The reduced tensor (its gradient: see ``npu_bridge.core.collectives.lowering``).
    Raises:
      TypeError: unsupported dtype.
      ValueError: bad reduction, fusion, fusion_id or group.
    """
    api = "allreduce"
    tensor = check_tensor(api, "tensor", tensor, REDUCE_DTYPES)
    _reduction(api, reduction)
    check_fusion(api, fusion, fusion_id, (0, 1, 2))
    return lowering.allreduce(tensor, membership.resolve(group, api), reduction)


def allgather(tensor, rank_size, group=WORLD_GROUP, fusion=0, fusion_id=-1):
    """Concatenates ``tensor`` of every rank of ``group`` along dimension 0, in group-rank order.

    Args:
      tensor: a tensor of an HCCL dtype, the same shape on every rank.
      rank_size: the number of ranks of ``group`` (the output's dimension 0 is ``rank_size`` times the input's).
      group: the group name.
      fusion: 0 or 2.
      fusion_id: int >= -1.
    Raises:
      TypeError: unsupported dtype.
      ValueError: ``rank_size`` not > 0 or not the group's size; bad fusion or group.
    """
    api = "allgather"
    tensor = check_tensor(api, "tensor", tensor, DATA_DTYPES)
    if isinstance(rank_size, bool) or not isinstance(rank_size, int) or rank_size <= 0:
        raise NpuArgumentError(f"rank_size should be greater than 0. allgather got rank_size={rank_size!r}")
    check_fusion(api, fusion, fusion_id, (0, 2))
    members = membership.resolve(group, api)
    _matches_group_size(api, rank_size, members)
    if tensor.shape.rank == 0:
        raise NpuArgumentError(
            f"{api}: tensor must have at least one dimension (they are concatenated along dimension 0), got a scalar"
        )
    return lowering.allgather(tensor, members)


def broadcast(tensor, root_rank, fusion=2, fusion_id=0, group=WORLD_GROUP):
    """Sends the root's tensors to every rank of ``group``; variables among them receive the root's values.

    As HCCL on the NPU writes the root's data into the input buffers, an input that is a variable (a
    ``tf.Variable`` object, a ref tensor, a ref variable's value or a resource variable's ``ReadVariableOp``;
    see ``variable_write_back``) is assigned the broadcast value on every rank other than the root, so
    ``sess.run(broadcast(tf.trainable_variables(), 0))`` leaves every rank's variables equal to the root's even
    when the result is not used. Other tensors are not changed.

    Args:
      tensor: a list of tensors or variables of HCCL dtypes with fully defined shapes (on the other ranks only
        their shapes and dtypes matter).
      root_rank: the group rank that sends.
      fusion: 0 or 2 (tensors of one call share one collective per dtype either way).
      fusion_id: int >= -1.
      group: the group name.
    Returns:
      The list of the root's tensors. An element for a variable input runs the assignment to that variable
      when it is evaluated.
    Raises:
      TypeError: ``tensor`` is not a list, or an unsupported dtype.
      ValueError: a shape that is not fully defined, bad root_rank, fusion or group.
    """
    api = "broadcast"
    if not isinstance(tensor, (list, tuple)):
        raise NpuArgumentTypeError(
            f"{api}: tensor must be a list of tensors (upstream broadcasts lists), got {type(tensor).__name__}"
        )
    values, assigns = zip(*[variable_write_back.value_and_target(t) for t in tensor]) if tensor else ((), ())
    tensors = [check_tensor(api, f"tensor[{i}]", t, DATA_DTYPES) for i, t in enumerate(values)]
    for i, t in enumerate(tensors):
        if not t.shape.is_fully_defined():
            raise NpuArgumentError(
                f"{api}: tensor[{i}] ({t.name}) has shape {t.shape}; broadcast needs fully defined "
                "shapes, since the receiving ranks allocate the tensor before it arrives"
            )
    check_fusion(api, fusion, fusion_id, (0, 2))
    members = membership.resolve(group, api)
    root = check_group_rank(api, "root_rank", root_rank, members)
    results = lowering.broadcast(tensors, members, root)
    return variable_write_back.tie(results, assigns, write=members.rank != root)


def reduce(tensor, reduction, root_rank, fusion=0, fusion_id=-1, group=WORLD_GROUP):
    """Reduces ``tensor`` over ``group`` for ``root_rank``; here every rank receives the result.

    Args and raises as ``allreduce``, plus ``root_rank`` (a group rank).
    """
    api = "reduce"
    tensor = check_tensor(api, "tensor", tensor, REDUCE_DTYPES)
    _reduction(api, reduction)
    check_fusion(api, fusion, fusion_id, (0, 1, 2))
    members = membership.resolve(group, api)
    check_group_rank(api, "root_rank", root_rank, members)
    return lowering.allreduce(tensor, members, reduction, kind="reduce")


def reduce_scatter(tensor, reduction, rank_size, group=WORLD_GROUP, fusion=0, fusion_id=-1):
    """Reduces ``tensor`` over ``group`` and leaves this rank's slice: group rank r gets rows
    [r * n, (r + 1) * n) of the reduced tensor, where n = dimension 0 / rank_size.

    Raises:
      TypeError: unsupported dtype.
      ValueError: dimension 0 not a multiple of ``rank_size``, ``rank_size`` not the group's size, bad
        reduction, fusion or group.
    """
    api = "reduce_scatter"
    tensor = check_tensor(api, "tensor", tensor, REDUCE_DTYPES)
    _reduction(api, reduction)
    _int(api, "rank_size", rank_size, 1)
    check_fusion(api, fusion, fusion_id, (0, 1, 2))
    members = membership.resolve(group, api)
    _matches_group_size(api, rank_size, members)
    if tensor.shape.rank == 0 or (
        tensor.shape.rank is not None and tensor.shape[0] is not None and tensor.shape[0] % rank_size
    ):
        raise NpuArgumentError(
            f"input first dim should be N * rank_size. reduce_scatter got shape {tensor.shape} "
            f"with rank_size={rank_size}"
        )
    return lowering.reduce_scatter(tensor, members, reduction)


def send(tensor, sr_tag, dest_rank, group=WORLD_GROUP):
    """Sends ``tensor`` to ``dest_rank``, which must run ``receive`` with the same ``sr_tag``.

    Args:
      tensor: a tensor of an HCCL dtype with a fully defined shape.
      sr_tag: int >= 0 pairing this send with a receive.
      dest_rank: the receiving group rank (not this rank).
      group: the group name.
    Returns:
      The send operation (run it, or make something depend on it).
    """
    api = "send"
    tensor = check_tensor(api, "tensor", tensor, DATA_DTYPES)
    if not tensor.shape.is_fully_defined():
        raise NpuArgumentError(
            f"{api}: tensor has shape {tensor.shape}; send needs a fully defined shape (the "
            "receiver names it in receive)"
        )
    _int(api, "sr_tag", sr_tag, 0)
    members = membership.resolve(group, api)
    peer = _peer(api, "dest_rank", dest_rank, members)
    pair, route, key = _pair(members, members.world_rank, peer, sr_tag)
    encoded = transport.encode(tf.reshape(tensor, [-1]), primitives.BROADCAST_DTYPES)
    return primitives.broadcast_send(encoded, pair, key, kind="send", root=0, segment_members=route).op


def receive(shape, data_type, sr_tag, src_rank, group=WORLD_GROUP):
    """Receives the tensor that ``src_rank`` sends with the same ``sr_tag``.

    Args:
      shape: its fully defined shape (list or TensorShape).
      data_type: its dtype (an HCCL dtype).
      sr_tag: int >= 0.
      src_rank: the sending group rank (not this rank).
      group: the group name.
    Returns:
      The received tensor.
    """
    api = "receive"
    shape = tf.TensorShape(shape)
    if not shape.is_fully_defined():
        raise NpuArgumentError(f"{api}: shape {shape} must be fully defined")
    dtype = tf.as_dtype(data_type).base_dtype
    if dtype not in DATA_DTYPES:
        raise NpuArgumentTypeError(
            f"{api}: data_type {dtype.name} is not supported here; allowed: {_names(DATA_DTYPES)}"
        )
    _int(api, "sr_tag", sr_tag, 0)
    members = membership.resolve(group, api)
    peer = _peer(api, "src_rank", src_rank, members)
    pair, route, key = _pair(members, peer, members.world_rank, sr_tag)
    carrier = transport.encoded_dtype(dtype, primitives.BROADCAST_DTYPES)
    received = primitives.broadcast_recv(
        tf.TensorShape([shape.num_elements()]), carrier, pair, key, kind="receive", root=0, segment_members=route
    )
    return tf.reshape(transport.decode(received, dtype), shape)


def all_to_all_v(send_data, send_counts, send_displacements, recv_counts, recv_displacements, group=WORLD_GROUP):
    """Sends ``send_counts[j]`` elements from ``send_displacements[j]`` of the flattened ``send_data`` to
    group rank j; the elements from rank j land at ``recv_displacements[j]``.

    Args:
      send_data: a tensor of an HCCL dtype.
      send_counts, send_displacements, recv_counts, recv_displacements: int64 (or int32) vectors with one
        entry per group rank, in elements. ``recv_counts`` must match what the peers send (checked when run).
      group: the group name.
    Returns:
      A 1-D tensor of ``max(recv_displacements + recv_counts)`` elements.
    """
    api = "all_to_all_v"
    send_data = check_tensor(api, "send_data", send_data, DATA_DTYPES)
    members = membership.resolve(group, api)
    vectors = [
        _count_vector(api, name, value, members.size)
        for name, value in (
            ("send_counts", send_counts),
            ("send_displacements", send_displacements),
            ("recv_counts", recv_counts),
            ("recv_displacements", recv_displacements),
        )
    ]
    return all_to_all.all_to_all_v(send_data, *vectors, members)


def all_to_all_v_c(send_data, send_count_matrix, rank, fusion=0, fusion_id=-1, group=WORLD_GROUP):
    """All-to-all with a count matrix: row i holds what group rank i sends to each rank (contiguously).

    Args:
      send_data: a tensor of an HCCL dtype.
      send_count_matrix: int64 (or int32) [rank_size, rank_size], the same on every rank.
      rank: this process's group rank.
      fusion: 0 or 2.
      fusion_id: int >= -1.
      group: the group name.
    Returns:
      A 1-D tensor: what every rank sent here, in rank order.
    """
    api = "all_to_all_v_c"
    send_data = check_tensor(api, "send_data", send_data, DATA_DTYPES)
    check_fusion(api, fusion, fusion_id, (0, 2))
    members = membership.resolve(group, api)
    if _int(api, "rank", rank, 0, members.size - 1) != members.rank:
        raise NpuArgumentError(f"{api}: rank={rank} but this process is group rank {members.rank} of {members.group!r}")
    matrix = tf.cast(check_tensor(api, "send_count_matrix", send_count_matrix, (tf.int32, tf.int64)), tf.int64)
    if not matrix.shape.is_compatible_with([members.size, members.size]):
        raise NpuArgumentError(
            f"{api}: send_count_matrix has shape {matrix.shape}; it must be "
            f"[{members.size}, {members.size}] (rank_size x rank_size)"
        )
    return all_to_all.all_to_all_v_c(send_data, matrix, members)


def _matches_group_size(api, rank_size, members):
    if rank_size != members.size:
        raise NpuArgumentError(f"{api}: rank_size={rank_size} but group {members.group!r} has {members.size} ranks")


def _count_vector(api, name, value, size):
    vector = tf.cast(check_tensor(api, name, value, (tf.int32, tf.int64)), tf.int64)
    if not vector.shape.is_compatible_with([size]):
        raise NpuArgumentError(f"{api}: {name} has shape {vector.shape}; it must be [{size}] (one entry per rank)")
    return vector


def _peer(api, name, value, members):
    peer = check_group_rank(api, name, value, members)
    if peer == members.rank:
        raise NpuArgumentError(f"{api}: {name}={value} is this process's own group rank")
    return members.ranks[peer]


def _pair(members, source, destination, sr_tag):
    """The groups of a send/receive between world ranks, and the transfer's instance key.

    Returns the two-member group TensorFlow's ops use, the one-way group the shared-memory segment uses (the
    sender first: it orders the transfers of its direction, so a transfer never waits for the other direction's
    order), and the instance key.
    """
    low, high = sorted((source, destination))
    pair = membership.Members(
        members.group, (low, high), keys.pair_group_key(members.group, low, high), (low, high).index(members.world_rank)
    )
    route = membership.Members(
        members.group,
        (source, destination),
        keys.transfer_group_key(members.group, source, destination),
        (source, destination).index(members.world_rank),
    )
    return pair, route, keys.send_recv_key(pair.key, source, destination, sr_tag)
