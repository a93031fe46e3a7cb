"""Optimizer wrappers that average gradients over the world before applying them (data parallelism).

With one rank they change nothing. With more, every dense gradient is allreduced (summed, fused into
segments by the split strategy) and divided by the world size; ``tf.IndexedSlices`` gradients are gathered.
The world size is read when the gradients are built (``npu_distributed_optimizer_wrapper``: when it wraps,
as upstream), from the rank table / RANK_SIZE, so graphs may be built before ``initialize_system``.
"""

import tensorflow as tf

from npu_bridge.core.collectives import lowering, membership
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.training.distributed import averaging
from npu_bridge.core.training.wrapped_optimizer import WrappedOptimizer
from npu_bridge.core.world.groups import WORLD_GROUP


def _average(grads):
    return averaging.allreduce_many(list(grads), "mean")


def _average_pairs(grads_and_vars):
    grads_and_vars = list(grads_and_vars)
    averaged = _average(g for g, _ in grads_and_vars)
    return list(zip(averaged, (v for _, v in grads_and_vars)))


class NPUDistributedOptimizer(WrappedOptimizer):
    """Wraps a ``tf.compat.v1.train.Optimizer``: ``compute_gradients`` returns world-averaged gradients.

    Args:
      optimizer: the optimizer to wrap.
      is_weight_update_sharding: each rank applies the update of its share of the variables (balanced by
        size, in variable order) and broadcasts the new values to the others; saves optimizer work and slot
        memory. Needs at least as many gradients as ranks.
      name: defaults to "Distributed" + the wrapped optimizer's class name.
    """

    def __init__(self, optimizer, is_weight_update_sharding=False, name=None):
        super().__init__(optimizer, name or f"Distributed{type(optimizer).__name__}")
        self._is_weight_update_sharding = is_weight_update_sharding

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients, averaged over the world."""
        return _average_pairs(self._optimizer.compute_gradients(*args, **kwargs))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies the gradients with the wrapped optimizer (sharded when asked, see the class docstring).

        Raises:
          ValueError: sharding with more ranks than gradients.
        """
        grads_and_vars = list(grads_and_vars)
        members = membership.resolve(WORLD_GROUP, "NPUDistributedOptimizer")
        if not self._is_weight_update_sharding or members.size == 1:
            return self._optimizer.apply_gradients(grads_and_vars, global_step=global_step, name=name)
        present = [(g, v) for g, v in grads_and_vars if g is not None]
        if members.size > len(present):
            raise NpuArgumentError(
                "NPUDistributedOptimizer: weight update sharding needs at least as many gradients "
                f"as ranks; {len(present)} gradients for {members.size} ranks"
            )
        owners = shard_owners([v.shape.num_elements() * v.dtype.base_dtype.size for _, v in present], members.size)
        mine = [pair for pair, owner in zip(present, owners) if owner == members.rank]
        apply_op = self._optimizer.apply_gradients(mine, global_step=global_step, name=name)
        updates = []
        with tf.control_dependencies([apply_op]):
            for owner in range(members.size):
                variables = [v for (_, v), o in zip(present, owners) if o == owner]
                values = lowering.broadcast([tf.identity(v.value()) for v in variables], members, owner)
                updates.extend(tf.compat.v1.assign(v, value) for v, value in zip(variables, values))
        return tf.group(apply_op, *updates, name=name or self.get_name())


def shard_owners(byte_sizes, size):
    """Assigns each variable (by byte size, in order) to the rank with the fewest bytes so far.

    Returns:
      The owner rank of each variable; with at least ``size`` variables every rank owns one.
    """
    load = [0] * size
    owners = []
    for nbytes in byte_sizes:
        rank = min(range(size), key=lambda r: load[r])
        owners.append(rank)
        load[rank] += max(nbytes, 1)
    return owners


def npu_distributed_optimizer_wrapper(optimizer):
    """Makes ``optimizer`` average its gradients over the world, in place (upstream's wrapper).

    Wraps whichever of ``compute_gradients`` (tf.compat.v1.train), ``get_gradients`` and
    ``_compute_gradients`` (Keras) the optimizer has, when the world has more than one rank at wrap time.

    Args:
      optimizer: an optimizer object, or a Keras optimizer name such as "adam".
    Returns:
      The same optimizer object.
    """
    if isinstance(optimizer, str):
        optimizer = tf.keras.optimizers.get(optimizer)
    if averaging.world_size() == 1:
        return optimizer
    for name, average in (
        ("compute_gradients", _average_pairs),
        ("_compute_gradients", _average_pairs),
        ("get_gradients", _average),
    ):
        method = getattr(optimizer, name, None)
        if method is not None and not getattr(method, "_npu_bridge_averaged", False):
            setattr(optimizer, name, _averaging(method, average))
    return optimizer


def _averaging(method, average):
    def wrapped(*args, **kwargs):
        return average(method(*args, **kwargs))

    wrapped.__doc__ = method.__doc__
    wrapped._npu_bridge_averaged = True
    return wrapped


class KerasDistributeOptimizer(tf.keras.optimizers.legacy.Optimizer):
    """Wraps a Keras (legacy, graph-mode) optimizer: gradients are averaged over the world.

    ``get_gradients`` and ``_compute_gradients`` average; ``get_updates`` applies the averaged gradients;
    ``apply_gradients``, ``get_config``, ``iterations``, ``weights`` and hyperparameters such as ``lr`` are
    the wrapped optimizer's.

    Args:
      optimizer: a ``tf.keras.optimizers.legacy`` optimizer (Keras trains in graph mode only with those).
      name: the wrapper's name.
    """

    def __init__(self, optimizer, name="NpuKerasOptimizer", **kwargs):
        if not isinstance(optimizer, tf.keras.optimizers.legacy.Optimizer):
            raise NpuArgumentTypeError(
                "KerasDistributeOptimizer: optimizer must be a tf.keras.optimizers.legacy "
                "optimizer (Keras trains TF1 graphs only with those), got "
                f"{type(optimizer).__name__}"
            )
        super().__init__(name=name, **kwargs)
        self._optimizer = optimizer

    def get_gradients(self, loss, params):
        """The wrapped optimizer's gradients, averaged over the world."""
        return _average(self._optimizer.get_gradients(loss, params))

    def _compute_gradients(self, loss, var_list, grad_loss=None, tape=None):
        return _average_pairs(self._optimizer._compute_gradients(loss, var_list, grad_loss=grad_loss, tape=tape))

    def get_updates(self, loss, params):
        """Averaged gradients applied by the wrapped optimizer."""
        return [self._optimizer.apply_gradients(zip(self.get_gradients(loss, params), params))]

    def apply_gradients(self, *args, **kwargs):
        """Delegates to the wrapped optimizer."""
        return self._optimizer.apply_gradients(*args, **kwargs)

    def get_config(self):
        """The wrapped optimizer's config."""
        return self._optimizer.get_config()

    @property
    def iterations(self):
        """The wrapped optimizer's step counter."""
        return self._optimizer.iterations

    @iterations.setter
    def iterations(self, variable):
        self._optimizer.iterations = variable

    @property
    def weights(self):
        """The wrapped optimizer's variables."""
        return self._optimizer.weights

    def variables(self):
        """The wrapped optimizer's variables."""
        return self._optimizer.variables()

    def __getattr__(self, name):
        # Only reached for names the wrapper lacks: hyperparameters (lr, beta_1, ...) are the wrapped one's.
        if name.startswith("__") or name in ("_optimizer", "_hyper"):
            raise AttributeError(name)
        return getattr(self._optimizer, name)
