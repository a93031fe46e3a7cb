"""The private helpers of TensorFlow 1.15's ``tensorflow.python.estimator.estimator`` that zoo scripts import.

``tensorflow.python.estimator.estimator`` of user code is npu_bridge's ``tf_estimator.estimator`` with these
added (``internal_paths``).
"""

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentTypeError


def _load_global_step_from_checkpoint_dir(checkpoint_dir):
    """The global step of the latest checkpoint in ``checkpoint_dir``; 0 when there is none or it has no step.

    Args:
      checkpoint_dir: a directory of checkpoints.
    Returns:
      The step, as TensorFlow 1.15's Estimator read it to decide whether training is done.
    """
    try:
        reader = tf.compat.v1.train.NewCheckpointReader(tf.compat.v1.train.latest_checkpoint(checkpoint_dir))
        return reader.get_tensor(tf.compat.v1.GraphKeys.GLOBAL_STEP)
    except Exception:  # no checkpoint, an unreadable one or one without a global step: 0, as 1.15 returned
        return 0


def _check_hooks_type(hooks):
    """``hooks`` as a list, every one a ``SessionRunHook``.

    Args:
      hooks: an iterable of hooks, or None.
    Returns:
      The list.
    Raises:
      NpuArgumentTypeError: an element is not a ``tf.compat.v1.train.SessionRunHook``.
    """
    hooks = list(hooks or [])
    for hook in hooks:
        if not isinstance(hook, tf.compat.v1.train.SessionRunHook):
            raise NpuArgumentTypeError(f"hooks must be SessionRunHook objects, given: {hook!r}")
    return hooks
