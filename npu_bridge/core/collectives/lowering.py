"""Differentiable collectives over resolved ``Members``: the layer between ``hccl_ops`` and TF's ops.

Each function handles any HCCL dtype (``transport``), a group of one rank (local ops, no communication), and
registers its gradient next to it. The gradients treat the job's loss as the sum of every rank's loss (so the
gradient of a sum-allreduce is a sum-allreduce, as upstream registers it):

  allreduce       sum: allreduce(dy); max/min: allreduce(dy) shared by the ranks holding the extreme value;
                  prod: allreduce(dy) times the product of the other ranks' values
  allgather       reduce_scatter(dy, sum): the sum of every rank's gradient for this rank's slice
  reduce_scatter  allgather(dy) (sum only)
  broadcast       root: allreduce(dy); other ranks: zeros (they still take part in the allreduce)
Upstream registers only the allreduce gradient (sum for every reduction).
"""

import tensorflow as tf

from npu_bridge.core.collectives import keys, primitives, transport

MERGE_OPS = {"sum": "Add", "prod": "Mul", "max": "Max", "min": "Min"}
_LOCAL_REDUCE = {"sum": tf.reduce_sum, "prod": tf.reduce_prod, "max": tf.reduce_max, "min": tf.reduce_min}


def _differentiable(forward, backward, *xs):
    """Applies ``forward(*xs)`` with gradient ``backward(xs, ys, dys)``; integer inputs have no gradient."""
    if not all(x.dtype.is_floating for x in xs):
        return forward(*xs)

    @tf.custom_gradient
    def apply(*inputs):
        outputs = forward(*inputs)

        def grad(*dys):
            dys = [tf.convert_to_tensor(dy) for dy in dys]
            dxs = backward(inputs, outputs, dys)
            return dxs if len(inputs) > 1 else dxs[0]

        return outputs, grad

    return apply(*xs)


def _reduce_raw(x, members, reduction, kind):
    encoded = transport.encode(x, primitives.REDUCE_DTYPES)
    y = primitives.all_reduce(encoded, members, MERGE_OPS[reduction], kind=kind)
    return transport.decode(y, x.dtype)


def allreduce(x, members, reduction, kind="allreduce"):
    """Reduces ``x`` element-wise over the group with "sum", "prod", "max" or "min"."""
    if members.size == 1:
        return tf.identity(x)

    def backward(xs, y, dys):
        (x_in,), (dy,) = xs, dys
        total = _reduce_raw(dy, members, "sum", kind)
        if reduction == "sum":
            return [total]
        if reduction in ("max", "min"):
            holds = tf.cast(tf.equal(x_in, y), dy.dtype)
            return [total * holds / _reduce_raw(holds, members, "sum", kind)]
        is_zero = tf.equal(x_in, 0)
        nonzero = tf.where(is_zero, tf.ones_like(x_in), x_in)
        nonzero_product = _reduce_raw(nonzero, members, "prod", kind)
        zeros = _reduce_raw(tf.cast(is_zero, dy.dtype), members, "sum", kind)
        others_zero = zeros - tf.cast(is_zero, dy.dtype) > 0
        return [total * tf.where(others_zero, tf.zeros_like(x_in), nonzero_product / nonzero)]

    return _differentiable(lambda t: _reduce_raw(t, members, reduction, kind), backward, x)


def allreduce_fused(tensors, members, reduction, kind="allreduce"):
    """Allreduces several tensors with one collective per dtype (flattened and concatenated).

    Returns:
      The reduced tensors, in order, with their shapes.
    """
    by_dtype = {}
    for i, t in enumerate(tensors):
        by_dtype.setdefault(t.dtype.base_dtype, []).append(i)
    results = [None] * len(tensors)
    for indices in by_dtype.values():
        parts = [tf.reshape(tensors[i], [-1]) for i in indices]
        sizes = [tf.size(p) for p in parts]
        flat = parts[0] if len(parts) == 1 else tf.concat(parts, 0)
        reduced = allreduce(flat, members, reduction, kind)
        pieces = [reduced] if len(parts) == 1 else tf.split(reduced, tf.stack(sizes), num=len(parts))
        for i, piece in zip(indices, pieces):
            results[i] = tf.reshape(piece, tf.shape(tensors[i]))
            results[i].set_shape(tensors[i].shape)
    return results


def allgather(x, members, kind="allgather"):
    """Concatenates every member's ``x`` (equal shapes) along dimension 0, in group-rank order."""
    if members.size == 1:
        return tf.identity(x)

    def forward(t):
        y = primitives.all_gather(transport.encode(t, primitives.GATHER_DTYPES), members, kind)
        return transport.decode(y, t.dtype)

    return _differentiable(forward, lambda xs, y, dys: [reduce_scatter(dys[0], members, "sum")], x)


def reduce_scatter(x, members, reduction, kind="reduce_scatter"):
    """Reduces ``x`` over the group and leaves slice ``rank`` (of ``size`` equal slices along dim 0) here.

    On the shared-memory segment a reduce-scatter of its own; on TensorFlow's path one all-to-all plus a local
    reduction (TensorFlow has no CPU reduce-scatter kernel), which moves the same data.
    """
    if members.size == 1:
        return tf.identity(x)

    def forward(t):
        key = keys.instance_key(members.key)
        encoded = transport.encode(t, primitives.REDUCE_DTYPES)
        y = primitives.reduce_scatter(encoded, members, MERGE_OPS[reduction], key, kind)
        if y is not None:
            return transport.decode(y, t.dtype)
        rows = tf.reshape(t, tf.concat([[members.size, -1], tf.shape(t)[1:]], 0))
        exchanged = primitives.all_to_all(transport.encode(rows, primitives.ALL_TO_ALL_DTYPES), members, key, key, kind)
        y = _LOCAL_REDUCE[reduction](transport.decode(exchanged, t.dtype), axis=0)
        if t.shape.rank is not None:
            first = None if t.shape[0] is None else t.shape[0] // members.size
            y.set_shape([first] + t.shape.as_list()[1:])
        return y

    def backward(xs, y, dys):
        if reduction != "sum":
            raise LookupError(f"reduce_scatter: only the 'sum' reduction has a gradient, not {reduction!r}")
        return [allgather(dys[0], members)]

    return _differentiable(forward, backward, x)


def broadcast(tensors, members, root):
    """Sends the root member's tensors to every member; fully defined shapes; one collective per dtype.

    Args:
      tensors: list of tensors; on members other than the root their shapes and dtypes are used, and the
        collective waits until they are computed (as on Ascend).
      members: the group's ``Members``.
      root: the group rank of the sender.
    Returns:
      The list of broadcast tensors.
    """
    if not tensors:
        return []
    if members.size == 1:
        return [tf.identity(t) for t in tensors]

    def forward(*inputs):
        return _broadcast_fused(list(inputs), members, root)

    def backward(xs, ys, dys):
        dxs = []
        for x, dy in zip(xs, dys):
            total = _reduce_raw(dy, members, "sum", "broadcast")
            if members.rank == root:
                dxs.append(total)
            else:
                with tf.control_dependencies([total]):
                    dxs.append(tf.zeros_like(x))
        return dxs

    results = [None] * len(tensors)
    floating = [i for i, t in enumerate(tensors) if t.dtype.is_floating]
    others = [i for i, t in enumerate(tensors) if not t.dtype.is_floating]
    if others:
        for i, y in zip(others, _broadcast_fused([tensors[i] for i in others], members, root)):
            results[i] = y
    if floating:
        ys = _differentiable(forward, backward, *[tensors[i] for i in floating])
        for i, y in zip(floating, ys):
            results[i] = y
    return results


def _broadcast_fused(tensors, members, root):
    by_dtype = {}
    for i, t in enumerate(tensors):
        by_dtype.setdefault(transport.encoded_dtype(t.dtype, primitives.BROADCAST_DTYPES), []).append(i)
    results = [None] * len(tensors)
    for carrier, indices in by_dtype.items():
        shapes = [tensors[i].shape for i in indices]
        sizes = [s.num_elements() for s in shapes]
        key = keys.instance_key(members.key)
        if members.rank == root:
            flat = tf.concat(
                [tf.reshape(transport.encode(tensors[i], primitives.BROADCAST_DTYPES), [-1]) for i in indices], 0
            )
            received = primitives.broadcast_send(flat, members, key, root=root)
        else:
            # As on Ascend, where every rank's tensor is an input of the op, a receiver waits for its own: in a
            # program every rank runs alike, the collectives the root's tensor comes from then precede this one on
            # every rank, as the shared-memory segment's leader-ordered groups need.
            with tf.control_dependencies([tensors[i] for i in indices]):
                received = primitives.broadcast_recv(tf.TensorShape([sum(sizes)]), carrier, members, key, root=root)
        for i, shape, piece in zip(indices, shapes, tf.split(received, sizes)):
            results[i] = tf.reshape(transport.decode(piece, tensors[i].dtype), shape)
    return results
