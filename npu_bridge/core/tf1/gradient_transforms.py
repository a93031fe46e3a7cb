"""``tf.contrib.estimator.clip_gradients_by_norm`` of TensorFlow 1.15 for the TF1 mode: an optimizer whose
``compute_gradients`` clips the wrapped optimizer's gradients by their global norm."""

import numbers

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError

__all__ = ["clip_gradients_by_norm"]


class _TransformGradients(tf.compat.v1.train.Optimizer):
    """A ``tf.compat.v1.train.Optimizer`` that applies ``transform`` to the (gradient, variable) pairs of the
    wrapped optimizer's ``compute_gradients``; everything else is the wrapped optimizer's."""

    def __init__(self, optimizer, transform, name):
        super().__init__(use_locking=False, name=name)
        self._optimizer = optimizer
        self._transform = transform

    def compute_gradients(self, *args, **kwargs):
        return self._transform(self._optimizer.compute_gradients(*args, **kwargs))

    def apply_gradients(self, *args, **kwargs):
        return self._optimizer.apply_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._optimizer.variables()


def clip_gradients_by_norm(optimizer, clip_norm):
    """``optimizer`` with its gradients clipped by global norm: each gradient g becomes
    g * clip_norm / max(global_norm, clip_norm), global_norm = sqrt(sum of every gradient's squared L2 norm)
    (``tf.clip_by_global_norm``; None gradients stay None).

    Args:
      optimizer: a ``tf.compat.v1.train.Optimizer``.
      clip_norm: positive number or scalar tensor, the largest global norm.

    Returns:
      A ``tf.compat.v1.train.Optimizer`` named "ClipByNorm<optimizer's name>" whose ``minimize`` /
      ``compute_gradients`` clip; ``apply_gradients``, slots and variables are ``optimizer``'s.

    Raises:
      NpuArgumentTypeError: ``optimizer`` is not a ``tf.compat.v1.train.Optimizer``.
      NpuArgumentError: a number ``clip_norm`` that is not positive.
    """
    if not isinstance(optimizer, tf.compat.v1.train.Optimizer):
        raise NpuArgumentTypeError(
            f"optimizer must be a tf.compat.v1.train.Optimizer, got {type(optimizer).__name__}: {optimizer!r}"
        )
    if isinstance(clip_norm, numbers.Real) and not clip_norm > 0:
        raise NpuArgumentError(f"clip_norm must be positive, got {clip_norm!r}")

    def clip(grads_and_vars):
        grads, variables = zip(*grads_and_vars)
        clipped, _ = tf.clip_by_global_norm(list(grads), clip_norm)
        return list(zip(clipped, variables))

    return _TransformGradients(optimizer, clip, name="ClipByNorm" + optimizer.get_name())
