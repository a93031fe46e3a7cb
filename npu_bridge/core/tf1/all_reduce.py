"""``tf.contrib.all_reduce`` of TensorFlow 1.15 for the TF1 mode: graph builders of an all-reduce across devices.

Each builder takes a list of same-shape, same-dtype tensors, one per device, and returns as many tensors, output i
on the device of input i, each ``un_op(x_0 (+) x_1 (+) ... )`` for the reduction ``red_op`` (``tf.add`` for a
sum). The reductions run with TensorFlow ops on the given devices, in the pattern each builder names: ``ring``
(chunks reduced around a ring, each chunk finishing on another device), ``recursive_hd`` (pairwise halving),
``shuffle`` (shards reduced on ``gather_devices``), and the hybrids that reduce within each worker task first.
TensorFlow 1.15's NCCL variants used NCCL kernels (GPU only); here ``nccl`` computes the same sums with ``red_op``
on the devices (only ``tf.add`` is accepted, as with NCCL).

``red_op`` is binary (``tf.add``) for ring, recursive-halving-doubling and NCCL, and takes a list (``tf.add_n``)
for shuffle, as in TensorFlow 1.15. A device without a task (``/cpu:0``) counts as task 0 of ``localhost``.
"""

import collections
import numbers

import tensorflow as tf
from tensorflow.python.ops import math_ops

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError

__all__ = [
    "build_nccl_all_reduce",
    "build_nccl_then_recursive_hd",
    "build_nccl_then_ring",
    "build_nccl_then_shuffle",
    "build_recursive_hd_all_reduce",
    "build_ring_all_reduce",
    "build_shuffle_all_reduce",
    "build_shuffle_then_ring",
    "build_shuffle_then_shuffle",
]


def build_ring_all_reduce(input_tensors, num_workers, num_subchunks, gpu_perm, red_op, un_op=None):
    """A ring all-reduce: every tensor is cut in ``devices * num_subchunks`` chunks; each chunk is reduced along the
    ring of devices (worker by worker, in ``gpu_perm`` order within a worker, the order rotated for each subchunk)
    and the reduced chunks are gathered back on every device.

    Args:
      input_tensors: list of T tensors (T >= 2), one per device, ``num_workers * len(gpu_perm)`` of them.
      num_workers: number of worker tasks they span.
      num_subchunks: chunks each device handles per step (at most ``len(gpu_perm)``).
      gpu_perm: ring order of the devices of a worker (a permutation of 0 .. len - 1).
      red_op: binary elementwise reduction (``tf.add``).
      un_op: optional unary op applied to the reduced values.

    Returns:
      list of T reduced tensors, output i on the device of input i.

    Raises:
      NpuArgumentError: fewer than 2 tensors, tensors that differ in shape or dtype or whose shape is not known,
        a count that does not match ``num_workers * len(gpu_perm)``, ``num_subchunks`` out of range.
    """
    tensors, shape = _flattened(input_tensors, "build_ring_all_reduce", minimum=2)
    workers = _positive_int(num_workers, "num_workers")
    subchunks = _positive_int(num_subchunks, "num_subchunks")
    perm = list(gpu_perm)
    if sorted(perm) != list(range(len(perm))):
        raise NpuArgumentError(f"gpu_perm must be a permutation of 0 .. {len(perm) - 1}, got {gpu_perm!r}")
    if subchunks > len(perm):
        raise NpuArgumentError(f"num_subchunks must be at most len(gpu_perm) ({len(perm)}), got {subchunks}")
    count = len(tensors)
    if workers * len(perm) != count:
        raise NpuArgumentError(
            f"input_tensors must hold num_workers * len(gpu_perm) = {workers * len(perm)} tensors, got {count}"
        )
    rotation = max(1, len(perm) // subchunks)
    rings = []
    for s in range(subchunks):
        offset = s * rotation
        local = perm[offset:] + perm[:offset]
        rings.append([w * len(perm) + g for w in range(workers) for g in local])
    devices = [t.device for t in tensors]
    pieces = count * subchunks
    chunks, pad = [], 0
    for t in tensors:
        with tf.compat.v1.colocate_with(t):
            parts, pad = _even_split(t, pieces)
            chunks.append(parts)
    reduced = []
    for k in range(pieces):
        ring, start = rings[k % subchunks], k // subchunks
        order = [ring[(start + 1 + j) % count] for j in range(count)]  # ends at ring position `start`
        value = chunks[order[0]][k]
        for d in order[1:]:
            with tf.device(devices[d]):
                value = red_op(value, chunks[d][k])
        if un_op is not None:
            with tf.device(devices[order[-1]]):
                value = un_op(value)
        reduced.append(value)
    return _gathered(reduced, devices, pad, shape)


def build_recursive_hd_all_reduce(input_tensors, red_op, un_op=None):
    """A recursive halving-doubling all-reduce: devices are paired at distances 1, 2, 4, ... and each pair reduces
    its values on both devices, so after log2(T) rounds every device holds the reduction.

    Args:
      input_tensors: list of T tensors, T a power of 2.
      red_op: binary elementwise reduction (``tf.add``).
      un_op: optional unary op applied to the reduced values.

    Returns:
      list of T reduced tensors, output i on the device of input i.

    Raises:
      NpuArgumentError: T is not a power of 2, tensors differ in shape or dtype.
    """
    tensors, shape = _flattened(input_tensors, "build_recursive_hd_all_reduce")
    count = len(tensors)
    if count & (count - 1):
        raise NpuArgumentError(f"build_recursive_hd_all_reduce needs a power of 2 of input_tensors, got {count}")
    devices = [t.device for t in tensors]
    values, distance = list(tensors), 1
    while distance < count:
        following = []
        for d in range(count):
            partner = d ^ distance
            with tf.device(devices[d]):
                low, high = (d, partner) if d < partner else (partner, d)
                following.append(red_op(values[low], values[high]))
        values, distance = following, distance * 2
    return _finished(values, devices, shape, un_op)


def build_shuffle_all_reduce(input_tensors, gather_devices, red_op, un_op=None):
    """A shuffle all-reduce (what parameter servers do): every tensor is cut in one shard per gather device, each
    gather device reduces its shard of all the tensors, and every device joins the reduced shards.

    Args:
      input_tensors: list of T tensors.
      gather_devices: names of the devices that reduce the shards.
      red_op: n-ary elementwise reduction of a list (``tf.add_n``).
      un_op: optional unary op applied to the reduced shards.

    Returns:
      list of T reduced tensors, output i on the device of input i.

    Raises:
      NpuArgumentError: no gather devices, tensors that differ in shape or dtype.
    """
    tensors, shape = _flattened(input_tensors, "build_shuffle_all_reduce")
    gather = _device_list(gather_devices, "gather_devices")
    shards, pad = _reduced_shards(tensors, gather, red_op, un_op)
    return _gathered(shards, [t.device for t in tensors], pad, shape)


def build_nccl_all_reduce(input_tensors, red_op, un_op=None):
    """TensorFlow 1.15's NCCL all-reduce: the sum of the tensors on every device (computed with ``red_op`` on the
    devices here: NCCL is GPU only).

    Args:
      input_tensors: list of T tensors.
      red_op: must be ``tf.add`` (NCCL sums only).
      un_op: optional unary op applied to the sums.

    Returns:
      list of T sums, output i on the device of input i.

    Raises:
      NpuArgumentError: ``red_op`` is not ``tf.add``; tensors that differ in shape or dtype.
    """
    _check_nccl_op(red_op, "red_op")
    tensors, shape = _flattened(input_tensors, "build_nccl_all_reduce")
    devices = [t.device for t in tensors]
    total = tensors[0]
    for t in tensors[1:]:
        with tf.device(t.device):
            total = red_op(total, t)
    return _finished([total] * len(tensors), devices, shape, un_op)


def build_nccl_then_ring(input_tensors, subdiv, red_op, un_op=None):
    """NCCL within each worker task, then a ring (``subdiv`` subchunks) across the workers' sums.

    Args:
      input_tensors: list of T tensors.
      subdiv: subchunks of the ring across workers.
      red_op: ``tf.add``.
      un_op: optional unary op applied to the reduced values.

    Returns:
      list of T reduced tensors, output i on the device of input i.
    """
    _check_nccl_op(red_op, "red_op")

    def across(values):
        if len(values) == 1:
            return _finished(values, [values[0].device], None, un_op)
        return build_ring_all_reduce(values, len(values), subdiv, [0], red_op, un_op)

    return _hybrid(input_tensors, "build_nccl_then_ring", lambda v, _: _sum_within(v, red_op), across)


def build_nccl_then_recursive_hd(input_tensors, red_op, un_op=None):
    """NCCL within each worker task, then recursive halving-doubling across the workers' sums (a power of 2 of
    workers).

    Args:
      input_tensors: list of T tensors.
      red_op: ``tf.add``.
      un_op: optional unary op applied to the reduced values.

    Returns:
      list of T reduced tensors, output i on the device of input i.
    """
    _check_nccl_op(red_op, "red_op")
    return _hybrid(
        input_tensors,
        "build_nccl_then_recursive_hd",
        lambda v, _: _sum_within(v, red_op),
        lambda values: build_recursive_hd_all_reduce(values, red_op, un_op),
    )


def build_nccl_then_shuffle(input_tensors, gather_devices, nccl_red_op, shuffle_red_op, un_op=None):
    """NCCL within each worker task, then a shuffle all-reduce across the workers' sums on ``gather_devices``.

    Args:
      input_tensors: list of T tensors.
      gather_devices: devices of the shuffle across workers.
      nccl_red_op: ``tf.add``.
      shuffle_red_op: n-ary reduction of a list (``tf.add_n``).
      un_op: optional unary op applied to the reduced values.

    Returns:
      list of T reduced tensors, output i on the device of input i.
    """
    _check_nccl_op(nccl_red_op, "nccl_red_op")
    return _hybrid(
        input_tensors,
        "build_nccl_then_shuffle",
        lambda v, _: _sum_within(v, nccl_red_op),
        lambda values: build_shuffle_all_reduce(values, gather_devices, shuffle_red_op, un_op),
    )


def build_shuffle_then_ring(input_tensors, gather_devices, subdiv, red_n_op, red_op, un_op=None):
    """A shuffle within each worker task (on its ``gather_devices`` entry), then a ring across the workers.

    Args:
      input_tensors: list of T tensors.
      gather_devices: one device per worker task.
      subdiv: subchunks of the ring.
      red_n_op: n-ary reduction of a list (``tf.add_n``), within workers.
      red_op: binary reduction (``tf.add``), across workers.
      un_op: optional unary op applied to the reduced values.

    Returns:
      list of T reduced tensors, output i on the device of input i.
    """

    def across(values):
        if len(values) == 1:
            return _finished(values, [values[0].device], None, un_op)
        return build_ring_all_reduce(values, len(values), subdiv, [0], red_op, un_op)

    return _shuffle_hybrid(input_tensors, gather_devices, red_n_op, across, "build_shuffle_then_ring")


def build_shuffle_then_shuffle(input_tensors, first_gather_devices, second_gather_devices, red_op, un_op=None):
    """A shuffle within each worker task (on its ``first_gather_devices`` entry), then a shuffle across the workers
    on ``second_gather_devices``.

    Args:
      input_tensors: list of T tensors.
      first_gather_devices: one device per worker task.
      second_gather_devices: devices of the shuffle across workers.
      red_op: n-ary reduction of a list (``tf.add_n``).
      un_op: optional unary op applied to the reduced values.

    Returns:
      list of T reduced tensors, output i on the device of input i.
    """

    def across(values):
        if len(values) == 1:
            return _finished(values, [values[0].device], None, un_op)
        return build_shuffle_all_reduce(values, second_gather_devices, red_op, un_op)

    return _shuffle_hybrid(input_tensors, first_gather_devices, red_op, across, "build_shuffle_then_shuffle")


def _shuffle_hybrid(input_tensors, gather_devices, red_n_op, across, builder):
    gather = _device_list(gather_devices, "gather_devices")

    def within(values, worker):
        shards, _ = _reduced_shards(values, [gather[worker]], red_n_op, None)
        return shards[0]

    workers = len({_task(tf.convert_to_tensor(t).device) for t in input_tensors})
    if workers != len(gather):
        raise NpuArgumentError(
            f"{builder} needs one gather device per worker task ({workers}), got {len(gather)}: {gather}"
        )
    return _hybrid(input_tensors, builder, within, across)


def _hybrid(input_tensors, builder, within, across):
    """Reduces within each worker task (``within(values, worker index)`` -> one tensor), across the workers
    (``across(list)`` -> one tensor per worker), and copies each worker's result to its devices."""
    tensors, shape = _flattened(input_tensors, builder)
    by_task = collections.OrderedDict()
    for index, t in enumerate(tensors):
        by_task.setdefault(_task(t.device), []).append(index)
    ups = [within([tensors[i] for i in indices], w) for w, indices in enumerate(by_task.values())]
    downs = across(ups)
    outputs = [None] * len(tensors)
    for indices, down in zip(by_task.values(), downs):
        for i in indices:
            with tf.device(tensors[i].device):
                outputs[i] = tf.identity(down)
    return _reshaped(outputs, shape)


def _sum_within(values, red_op):
    total = values[0]
    for t in values[1:]:
        with tf.device(t.device):
            total = red_op(total, t)
    with tf.device(values[0].device):
        return tf.identity(total)


def _reduced_shards(tensors, gather, red_op, un_op):
    pieces, pad = [], 0
    for t in tensors:
        with tf.compat.v1.colocate_with(t):
            parts, pad = _even_split(t, len(gather))
            pieces.append(parts)
    shards = []
    for index, device in enumerate(gather):
        with tf.device(device):
            shard = red_op([p[index] for p in pieces])
            shards.append(un_op(shard) if un_op is not None else shard)
    return shards, pad


def _even_split(flat, pieces):
    """``flat`` zero-padded to a multiple of ``pieces`` and split in ``pieces`` equal parts; the padding length."""
    length = int(flat.shape[0])
    pad = (-length) % pieces
    if pad:
        flat = tf.concat([flat, tf.zeros([pad], dtype=flat.dtype)], 0)
    return tf.split(flat, pieces), pad


def _gathered(parts, devices, pad, shape):
    outputs = []
    for device in devices:
        with tf.device(device):
            joined = tf.concat([tf.identity(p) for p in parts], 0) if len(parts) > 1 else tf.identity(parts[0])
            outputs.append(joined[: int(joined.shape[0]) - pad] if pad else joined)
    return _reshaped(outputs, shape)


def _finished(values, devices, shape, un_op):
    outputs = []
    for value, device in zip(values, devices):
        with tf.device(device):
            value = tf.identity(value)
            outputs.append(un_op(value) if un_op is not None else value)
    return _reshaped(outputs, shape)


def _reshaped(tensors, shape):
    if shape is None or shape.rank == 1:
        return tensors
    reshaped = []
    for t in tensors:
        with tf.compat.v1.colocate_with(t):
            reshaped.append(tf.reshape(t, shape))
    return reshaped


def _flattened(input_tensors, builder, minimum=1):
    if not isinstance(input_tensors, (list, tuple)):
        raise NpuArgumentTypeError(f"input_tensors of {builder} must be a list of tensors, got {input_tensors!r}")
    if len(input_tensors) < minimum:
        raise NpuArgumentError(
            f"input_tensors of {builder} must hold at least {minimum} tensor(s), got {len(input_tensors)}"
        )
    tensors = [tf.convert_to_tensor(t) for t in input_tensors]
    shape, dtype = tensors[0].shape, tensors[0].dtype
    if not shape.is_fully_defined():
        raise NpuArgumentError(f"input_tensors of {builder} must have a statically known shape, got {shape}")
    for index, t in enumerate(tensors):
        if t.shape != shape or t.dtype != dtype:
            raise NpuArgumentError(
                f"input_tensors of {builder} must all have the shape and dtype of the first ({shape}, "
                f"{dtype.name}); tensor {index} has {t.shape}, {t.dtype.name}"
            )
    if shape.rank == 1:
        return tensors, shape
    flat = []
    for t in tensors:
        with tf.compat.v1.colocate_with(t):
            flat.append(tf.reshape(t, [-1]))
    return flat, shape


def _task(device):
    spec = tf.DeviceSpec.from_string(device or "")
    return (spec.job or "localhost", spec.replica or 0, spec.task or 0)


def _device_list(devices, argument):
    if isinstance(devices, str) or not isinstance(devices, (list, tuple)) or not devices:
        raise NpuArgumentError(f"{argument} must be a non-empty list of device names, got {devices!r}")
    return list(devices)


def _check_nccl_op(red_op, argument):
    if red_op not in (tf.add, math_ops.add):
        raise NpuArgumentError(f"{argument} of an NCCL all-reduce must be tf.add (NCCL sums only), got {red_op!r}")


def _positive_int(value, argument):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise NpuArgumentTypeError(f"{argument} must be an int, got {value!r}")
    if value <= 0:
        raise NpuArgumentError(f"{argument} must be positive, got {value}")
    return int(value)
