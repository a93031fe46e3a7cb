"""Small helpers of ``npu_init`` that Ascend migration tools write into training scripts."""

import tensorflow as tf

from npu_bridge.core.session import config_proto
from npu_bridge.core.training.distributed import optimizers as distributed_optimizers
from npu_bridge.core.training.distributed import variable_broadcast
from npu_bridge.core.world import world


class NpuEmptyHook(tf.compat.v1.train.SessionRunHook):
    """A hook that does nothing (migration tools put it where a Horovod hook was)."""


def npu_hooks_append(hooks_list=()):
    """Appends the variable-broadcast hook to ``hooks_list``.

    Args:
      hooks_list: a list of hooks; anything else is replaced by a new list.
    Returns:
      The list with ``NPUBroadcastGlobalVariablesHook(0, RANK_ID)`` appended.
    Raises:
      RankTableError: RANK_ID is set but not a valid rank id.
    """
    if not isinstance(hooks_list, list):
        hooks_list = []
    rank_id = world.rank_id_from_environment()
    hooks_list.append(variable_broadcast.NPUBroadcastGlobalVariablesHook(0, rank_id))
    return hooks_list


def npu_callbacks_append(callbacks_list=()):
    """Appends the Keras variable-broadcast callback to ``callbacks_list``.

    Args:
      callbacks_list: a list of callbacks; anything else is replaced by a new list.
    Returns:
      The list with ``NPUBroadcastGlobalVariablesCallback(0)`` appended.
    """
    if not isinstance(callbacks_list, list):
        callbacks_list = []
    callbacks_list.append(variable_broadcast.NPUBroadcastGlobalVariablesCallback(0))
    return callbacks_list


def npu_tf_optimizer(opt):
    """Wraps a ``tf.compat.v1.train.Optimizer`` for data-parallel training (``NPUDistributedOptimizer``)."""
    return distributed_optimizers.NPUDistributedOptimizer(opt)


def npu_keras_optimizer(opt):
    """Wraps a Keras optimizer for data-parallel training (``KerasDistributeOptimizer``)."""
    return distributed_optimizers.KerasDistributeOptimizer(opt)


def npu_run_config_init(run_config=None):
    """Gives an Estimator ``RunConfig`` an NPU session config.

    Args:
      run_config: a ``tf.estimator.RunConfig``; None creates one.
    Returns:
      The run config, whose session config was replaced by ``npu_config_proto(session_config)``.
    """
    if run_config is None:
        run_config = tf.compat.v1.estimator.RunConfig()  # npu_bridge provides tf.estimator on TF >= 2.16
    run_config.__dict__["_session_config"] = config_proto.npu_config_proto(run_config.session_config)
    return run_config
