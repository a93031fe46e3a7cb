"""The pieces of ``tf.contrib.tpu`` beyond the Estimator, for one replica on a CPU or GPU.

- ``CrossShardOptimizer(opt)``: TensorFlow 1.15 averaged (``reduction=MEAN``) or summed the gradients over the
  TPU shards. With one replica both are the gradient itself, so it is the wrapped optimizer's own update.
- ``cross_replica_sum(x)``: the sum over one replica is ``x``.
- ``AsyncCheckpointSaverHook``: saves in the training thread (``CheckpointSaverHook``), so a step waits for its
  checkpoint; the files are the same.

Each says once, when first used, how it differs from a TPU run.
"""

import tensorflow as tf

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.training.wrapped_optimizer import WrappedOptimizer

_told = set()


def _tell_once(name, difference):
    if name not in _told:
        _told.add(name)
        log.logger.warning("tf.contrib.tpu.%s %s (see docs/tf1_mode.md)", name, difference)


class CrossShardOptimizer(WrappedOptimizer):
    """An optimizer over TPU shards, here over one replica: the wrapped optimizer's update.

    Args:
      opt: a ``tf.compat.v1.train.Optimizer``.
      reduction: ``tf.compat.v1.losses.Reduction.MEAN`` or ``SUM`` (equal for one replica).
      name: the optimizer's name.
      group_assignment: replica groups; one group of one replica is all there is here.
    Raises:
      TypeError: ``opt`` is not a ``tf.compat.v1.train.Optimizer``.
      ValueError: an unknown ``reduction``.
    """

    def __init__(
        self, opt, reduction=tf.compat.v1.losses.Reduction.MEAN, name="CrossShardOptimizer", group_assignment=None
    ):
        if not isinstance(opt, tf.compat.v1.train.Optimizer):
            raise NpuArgumentTypeError(
                f"CrossShardOptimizer: opt must be a tf.compat.v1.train.Optimizer, given: {type(opt).__name__}"
            )
        allowed = (tf.compat.v1.losses.Reduction.MEAN, tf.compat.v1.losses.Reduction.SUM)
        if reduction not in allowed:
            raise NpuArgumentError(f"CrossShardOptimizer: reduction must be one of {allowed}, given: {reduction!r}")
        super().__init__(opt, name)
        self._reduction = reduction
        self._group_assignment = group_assignment
        _tell_once("CrossShardOptimizer", "runs as one replica here: its update is the wrapped optimizer's")

    def compute_gradients(self, loss, var_list=None, **kwargs):
        """The wrapped optimizer's gradients (the mean or sum over one replica)."""
        return self._optimizer.compute_gradients(loss, var_list=var_list, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The wrapped optimizer's update with these gradients."""
        return self._optimizer.apply_gradients(grads_and_vars, global_step=global_step, name=name)


def cross_replica_sum(x, group_assignment=None, name=None):  # one group of one replica
    """The sum of ``x`` over the replicas: ``x`` itself, as there is one.

    Args:
      x: a tensor.
      group_assignment: replica groups (one replica here).
      name: the op's name.
    Returns:
      ``tf.identity(x)``.
    """
    _tell_once("cross_replica_sum", "sums over one replica here: it returns its input")
    return tf.identity(x, name=name)


class AsyncCheckpointSaverHook(tf.compat.v1.train.CheckpointSaverHook):
    """``CheckpointSaverHook`` under TensorFlow 1.15's asynchronous hook's name: it saves synchronously.

    Args:
      checkpoint_dir, save_secs, save_steps, saver, checkpoint_basename, scaffold, listeners: as
        ``CheckpointSaverHook``'s.
    """

    def __init__(
        self,
        checkpoint_dir,
        save_secs=None,
        save_steps=None,
        saver=None,
        checkpoint_basename="model.ckpt",
        scaffold=None,
        listeners=None,
    ):
        _tell_once("AsyncCheckpointSaverHook", "saves in the training thread here (the same files, written in turn)")
        super().__init__(
            checkpoint_dir,
            save_secs=save_secs,
            save_steps=save_steps,
            saver=saver,
            checkpoint_basename=checkpoint_basename,
            scaffold=scaffold,
            listeners=listeners,
        )
