"""Allreduce of gradients and tensors as the distributed helpers use it.

Dense tensors of one call are fused into segments (``fusion``); ``tf.IndexedSlices`` (sparse gradients of
embedding lookups) are gathered instead: their values and indices from every rank are concatenated, as
upstream does. "mean" divides the sum by the group's size.
"""

import tensorflow as tf

from npu_bridge.core.collectives import lowering, membership, operations
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.training.distributed import fusion
from npu_bridge.core.world.groups import WORLD_GROUP

REDUCTIONS = ("mean",) + operations.REDUCTIONS


def world_size():
    """The number of ranks of the world, known before the system is initialized."""
    return membership.resolve(WORLD_GROUP, "rank size").size


def allreduce_many(values, reduction="mean", fuse=True, group=WORLD_GROUP):
    """Allreduces a list of tensors / IndexedSlices / None.

    Args:
      values: the list; None entries stay None.
      reduction: "mean", "sum", "prod", "max" or "min" ("mean" and "sum" for IndexedSlices).
      fuse: fuse dense tensors by the group's split strategy; False reduces each tensor on its own.
      group: the group name.
    Returns:
      The reduced list.
    Raises:
      ValueError: bad reduction or group.
      TypeError: a dtype HCCL cannot reduce.
    """
    api = "npu_allreduce"
    if reduction not in REDUCTIONS:
        raise NpuArgumentError(
            f"{api}: reduction {reduction!r} is not supported; allowed: {', '.join(repr(r) for r in REDUCTIONS)}"
        )
    members = membership.resolve(group, api)
    results = list(values)
    if members.size == 1:
        return results
    dense = [i for i, v in enumerate(values) if v is not None and not isinstance(v, tf.IndexedSlices)]
    for i in dense:
        results[i] = operations.check_tensor(api, f"values[{i}]", values[i], operations.REDUCE_DTYPES)
    total = "sum" if reduction == "mean" else reduction
    if fuse:
        sizes = [results[i].shape.num_elements() or 0 for i in dense]
        byte_sizes = [n * results[i].dtype.size for n, i in zip(sizes, dense)]
        for segment in fusion.segments(byte_sizes, fusion.strategy_for(group)):
            indices = [dense[k] for k in segment]
            for i, reduced in zip(indices, lowering.allreduce_fused([results[i] for i in indices], members, total)):
                results[i] = reduced
    else:
        for i in dense:
            results[i] = lowering.allreduce(results[i], members, total)
    for i, v in enumerate(values):
        if isinstance(v, tf.IndexedSlices):
            if reduction not in ("mean", "sum"):
                raise NpuArgumentError(
                    f"{api}: values[{i}] is an IndexedSlices, which can only be reduced with "
                    f"'mean' or 'sum', not {reduction!r}"
                )
            results[i] = tf.IndexedSlices(
                lowering.allgather(v.values, members), lowering.allgather(v.indices, members), v.dense_shape
            )
    if reduction == "mean":
        results = [_divide(r, members.size) for r in results]
    return results


def _divide(value, size):
    if value is None:
        return None
    if isinstance(value, tf.IndexedSlices):
        return tf.IndexedSlices(_divide(value.values, size), value.indices, value.dense_shape)
    if value.dtype.is_floating:
        return value / tf.cast(size, value.dtype)
    return value // size


def npu_allreduce(values, reduction="mean", fusion=1, fusion_id=-1, group=WORLD_GROUP):
    """Upstream's ``npu_allreduce``: allreduces a tensor or a list of tensors.

    Args:
      values: a tensor, an IndexedSlices, or a list of them.
      reduction: "mean" (sum divided by the group's size), "sum", "prod", "max" or "min".
      fusion: 0 reduces each tensor on its own; 1 or 2 fuse the list by the group's split strategy.
      fusion_id: int >= -1 (accepted).
      group: the group name.
    Returns:
      The reduced tensor, or list.
    """
    operations.check_fusion("npu_allreduce", fusion, fusion_id, (0, 1, 2))
    if isinstance(values, (list, tuple)):
        return allreduce_many(list(values), reduction, fuse=fusion != 0, group=group)
    return allreduce_many([values], reduction, fuse=False, group=group)[0]


def allreduce(tensor, average=True):
    """Upstream's module-level ``npu_optimizer.allreduce``: sum over the world, divided by its size if ``average``."""
    return allreduce_many([tensor], "mean" if average else "sum", fuse=False)[0]


def reduce(tensor, root_rank, average=True, fusion=0, fusion_id=-1):
    """Upstream's module-level ``npu_optimizer.reduce``: sum for ``root_rank`` (here every rank gets it),
    divided by the world size if ``average``."""
    reduced = operations.reduce(tensor, "sum", root_rank, fusion, fusion_id)
    return _divide(reduced, world_size()) if average else reduced
