"""``npu_device.distribute``: data-parallel helpers over the job's ranks.

In a one-rank job (no device opened, or one worker) ``all_reduce`` returns its input, ``broadcast`` does
nothing, ``shard_and_rebatch_dataset`` returns its arguments and the Keras optimizer wrapper's all-reduce is
that no-op, as the adapter's. With several ranks they run npu_bridge's HCCL collectives
(``npu_bridge.core.collectives.operations``) over the eager context that ``npu_device.open()`` joined to the job:
inside a ``tf.function`` as graph ops, and eagerly through a function built for the call.
"""

import tensorflow as tf

from npu_bridge.core.collectives import operations
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf2 import device

REDUCTIONS = ("sum", "mean", "max", "min", "prod")
WORLD_GROUP = "hccl_world_group"


def _workers():
    handle = device.opened()
    return (handle.workers_num, handle.worker_id) if handle is not None else (1, 0)


def _single(what):
    if _workers()[0] <= 1:
        log.info_once(("npu_device-skip", what), "npu_device: skip %s, not an npu cluster worker", what)
        return True
    return False


def _in_graph(build):
    """Runs ``build()`` where collectives can be built: here inside a graph, else in a function made for it."""
    if not tf.executing_eagerly():
        return build()
    return tf.function(build, autograph=False)()


def _reduced(value, reduction, fusion, fusion_id, group, workers):
    tensor = tf.convert_to_tensor(value)
    total = operations.allreduce(tensor, "sum" if reduction == "mean" else reduction, fusion, fusion_id, group)
    if reduction != "mean":
        return total
    if tensor.dtype.is_floating:
        return total * tf.cast(1.0 / workers, tensor.dtype)
    return total // workers


def all_reduce(values, reduction="mean", fusion=1, fusion_id=-1, group=WORLD_GROUP):
    """All-reduces a tensor or a list of tensors across the ranks.

    Args:
      values: a tensor, NumPy value or variable, or a list/tuple of them (None entries stay None).
      reduction: "mean", "sum", "max", "min" or "prod".
      fusion, fusion_id, group: as the adapter's (accepted; each call is its own collective).
    Returns:
      The reduced values, in the structure given.
    Raises:
      NpuArgumentError: an unknown reduction, or a value of a type the collective cannot carry.
      CollectiveError: a rank failed or timed out.
    """
    if reduction not in REDUCTIONS:
        raise NpuArgumentError(f"all_reduce: reduction={reduction!r} is not one of {', '.join(REDUCTIONS)}")
    if _single("all_reduce"):
        return values
    workers = _workers()[0]
    many = isinstance(values, (list, tuple))
    items = list(values) if many else [values]

    def build():
        return [None if v is None else _reduced(v, reduction, fusion, fusion_id, group, workers) for v in items]

    results = _in_graph(build)
    return list(results) if many else results[0]


def broadcast(values, root_rank=0, fusion=2, fusion_id=0, group=WORLD_GROUP):
    """Assigns rank ``root_rank``'s value to every variable in ``values`` on every rank.

    Args:
      values: a variable or a list of variables.
      root_rank: the rank whose values win.
      fusion, fusion_id, group: as the adapter's.
    Raises:
      NpuArgumentError: an entry is not a variable, or root_rank is not a rank of the job.
      CollectiveError: a rank failed or timed out.
    """
    variables = values if isinstance(values, (list, tuple)) else [values]
    for variable in variables:
        if not isinstance(variable, tf.Variable):
            raise NpuArgumentError(f"broadcast: values must be variables, got {type(variable).__name__}")
    workers, _ = _workers()
    if isinstance(root_rank, bool) or not isinstance(root_rank, int) or not 0 <= root_rank < workers:
        raise NpuArgumentError(f"broadcast: root_rank={root_rank!r} is not a rank of this {workers}-rank job")
    if _single("broadcast") or not variables:
        return

    def build():  # evaluating the results assigns the root's values to the other ranks' variables
        return operations.broadcast(list(variables), root_rank, fusion, fusion_id, group)

    _in_graph(build)


def shard_and_rebatch_dataset(dataset, global_bs):
    """Shards ``dataset`` by rank and returns the per-rank batch size (the caller batches with it).

    Args:
      dataset: a ``tf.data.Dataset``.
      global_bs: the global batch size; a multiple of the number of ranks.
    Returns:
      ``(dataset, batch size)``: unchanged with one rank, else this rank's shard and ``global_bs // ranks``.
    Raises:
      NpuArgumentError (a ValueError): ``global_bs`` is not a multiple of the number of ranks.
    """
    workers, worker = _workers()
    if workers <= 1:
        return dataset, global_bs
    if global_bs % workers != 0:
        raise NpuArgumentError(
            f"shard_and_rebatch_dataset: global_bs={global_bs} is not a multiple of the {workers} ranks"
        )
    return dataset.shard(workers, worker), global_bs // workers


def npu_distributed_keras_optimizer_wrapper(
    optimizer, reduce_reduction="mean", fusion=1, fusion_id=-1, group=WORLD_GROUP
):
    """Makes ``optimizer`` (the same instance) all-reduce its gradients before applying them.

    Args:
      optimizer: a tf.keras optimizer, or a name ``tf.keras.optimizers.get`` knows.
      reduce_reduction: the reduction of ``all_reduce``.
      fusion, fusion_id, group: as ``all_reduce``'s.
    Returns:
      The optimizer.
    Raises:
      NpuArgumentError: an unknown reduction.
    """
    if reduce_reduction not in REDUCTIONS:
        raise NpuArgumentError(
            f"npu_distributed_keras_optimizer_wrapper: reduce_reduction={reduce_reduction!r} is not one of "
            f"{', '.join(REDUCTIONS)}"
        )
    if isinstance(optimizer, str):
        optimizer = tf.keras.optimizers.get(optimizer)
    apply = optimizer.apply_gradients

    def apply_gradients(grads_and_vars, *args, **kwargs):
        grads_and_vars = list(grads_and_vars)
        grads = all_reduce([g for g, _ in grads_and_vars], reduce_reduction, fusion, fusion_id, group)
        return apply(list(zip(grads, [v for _, v in grads_and_vars])), *args, **kwargs)

    optimizer.apply_gradients = apply_gradients
    return optimizer
