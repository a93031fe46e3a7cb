"""``all_to_all_v`` / ``all_to_all_v_c``: every member sends a different number of elements to every other.

TensorFlow's all-to-all exchanges equal rows and remembers the row size of each instance key. So the
exchange pads every member's rows to a common size, rounded up to a power of two, and uses one instance key
per power of two (``keys.bucket_block``): counts may change from run to run, at most twice the data moves,
and a process never needs more than ``keys.BUCKETS`` instances per op.

``all_to_all_v`` learns the common size by gathering every member's ``send_counts`` (which also lets it
check ``recv_counts`` against what the peers really send); ``all_to_all_v_c`` has the whole count matrix.
"""

import tensorflow as tf

from npu_bridge.core.collectives import keys, primitives, transport


def exchange(send_data, send_counts, send_displacements, recv_counts, recv_displacements, members, largest_count, kind):
    """Runs the padded exchange.

    Args:
      send_data: tensor; flattened, its elements are what the counts and displacements index.
      send_counts, send_displacements: int64 [size]: this member sends ``send_counts[j]`` elements starting
        at ``send_displacements[j]`` to group rank j.
      recv_counts, recv_displacements: int64 [size]: the elements from group rank j land at
        ``recv_displacements[j]``.
      members: the group's ``Members``.
      largest_count: int64 scalar, the largest count any member sends (equal on every member).
      kind: the upstream operation name.
    Returns:
      A 1-D tensor of ``max(recv_displacements + recv_counts)`` elements (zero where nothing was received).
    """
    flat = tf.reshape(send_data, [-1])
    size = members.size
    bucket = tf.cast(
        tf.math.ceil(
            tf.math.log(tf.cast(tf.maximum(largest_count, 1), tf.float64)) / tf.math.log(tf.constant(2.0, tf.float64))
        ),
        tf.int64,
    )
    bucket = tf.minimum(bucket, keys.BUCKETS - 1)
    width = tf.bitwise.left_shift(tf.constant(1, tf.int64), bucket)
    column = tf.range(width)[tf.newaxis, :]
    valid = column < send_counts[:, tf.newaxis]
    index = tf.where(valid, send_displacements[:, tf.newaxis] + column, tf.zeros_like(column))
    rows = tf.where(valid, tf.gather(flat, index), tf.zeros([size, width], flat.dtype))
    if members.size == 1:
        received = rows
    else:
        block = keys.bucket_block(members.key)
        instance_key = tf.cast(block + bucket, tf.int32)
        received = primitives.all_to_all(
            transport.encode(rows, primitives.ALL_TO_ALL_DTYPES), members, instance_key, block, kind
        )
        received = transport.decode(received, flat.dtype)
    keep = column < recv_counts[:, tf.newaxis]
    targets = tf.boolean_mask(recv_displacements[:, tf.newaxis] + column, keep)
    length = tf.reduce_max(tf.concat([recv_displacements + recv_counts, [0]], 0))
    return tf.scatter_nd(targets[:, tf.newaxis], tf.boolean_mask(received, keep), [length])


def all_to_all_v(send_data, send_counts, send_displacements, recv_counts, recv_displacements, members):
    """``hccl_ops.all_to_all_v`` on validated int64 counts and displacements (see ``exchange``).

    Raises (when run):
      InvalidArgumentError: ``recv_counts`` differs from what the peers send to this rank.
    """
    if members.size == 1:
        matrix = send_counts[tf.newaxis, :]
    else:
        matrix = tf.reshape(primitives.all_gather(send_counts, members, "all_to_all_v"), [members.size, members.size])
    check = tf.debugging.assert_equal(
        recv_counts,
        matrix[:, members.rank],
        message=f"all_to_all_v (group {members.group!r}, group rank {members.rank}): recv_counts must equal "
        "what the other ranks send to this rank (this rank's entry of their send_counts)",
    )
    with tf.control_dependencies([check]):
        return exchange(
            send_data,
            send_counts,
            send_displacements,
            recv_counts,
            recv_displacements,
            members,
            tf.reduce_max(matrix),
            "all_to_all_v",
        )


def all_to_all_v_c(send_data, send_count_matrix, members):
    """``hccl_ops.all_to_all_v_c``: row i of the [size, size] int64 count matrix is what group rank i sends."""
    send_counts = send_count_matrix[members.rank]
    recv_counts = send_count_matrix[:, members.rank]
    return exchange(
        send_data,
        send_counts,
        tf.cumsum(send_counts, exclusive=True),
        recv_counts,
        tf.cumsum(recv_counts, exclusive=True),
        members,
        tf.reduce_max(send_count_matrix),
        "all_to_all_v_c",
    )
