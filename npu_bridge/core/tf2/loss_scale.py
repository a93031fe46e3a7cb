"""``npu_device.train.optimizer.NpuLossScaleOptimizer``: Keras loss scaling that skips every non-finite step.

It is tf_keras' ``LossScaleOptimizer`` for the optimizer it wraps (the optimizer generation decides the class,
as in Keras), plus the adapter's additions: a bool variable ``last_step_finite`` assigned at every step, and a
static loss scale (``dynamic=False``) that also skips a step whose gradients are not finite, where Keras would
apply it. Finiteness is read from the gradients, as the adapter does on a device in INF/NaN mode.
"""

import tensorflow as tf
from tf_keras.src.mixed_precision import loss_scale_optimizer as keras_loss_scale

from npu_bridge.core.runtime.errors import NpuArgumentTypeError


def _all_finite(grads):
    finite = [tf.reduce_all(tf.math.is_finite(g)) for g in grads if g is not None]
    return tf.reduce_all(finite) if finite else tf.constant(True)


class _FiniteGate:
    """What the adapter adds to either Keras loss-scale optimizer class."""

    @property
    def last_step_finite(self):
        """The bool variable saying whether the last step's gradients were finite."""
        self._npu_build_last_step_finite()
        return self._npu_last_step_finite

    def _npu_build_last_step_finite(self):
        if getattr(self, "_npu_last_step_finite", None) is None:
            with tf.init_scope():
                self._npu_last_step_finite = tf.Variable(
                    True, trainable=False, name="npu_last_step_finite", dtype=tf.bool
                )

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        """Applies the gradients when they are finite (Keras' rule; also for a static loss scale).

        Args:
          grads_and_vars, *args, **kwargs: as Keras' ``apply_gradients``.
        """
        grads_and_vars = list(grads_and_vars)
        finite = _all_finite([g for g, _ in grads_and_vars])
        self.last_step_finite.assign(finite)
        apply = super().apply_gradients
        if self.dynamic:
            return apply(grads_and_vars, *args, **kwargs)
        return tf.__internal__.smart_cond.smart_cond(
            finite,
            lambda: _no_value(apply(grads_and_vars, *args, **kwargs)),
            lambda: _no_value(self.inner_optimizer.iterations.assign_add(1, read_value=False)),
        )


def _no_value(_):
    return tf.constant(True)


class _Dispatch(keras_loss_scale.LossScaleOptimizerMetaclass):
    """Creates the class for the wrapped optimizer's generation, as Keras' metaclass does."""

    def __call__(cls, inner_optimizer, *args, **kwargs):  # noqa: N805  (a metaclass method takes the class)
        if cls is not NpuLossScaleOptimizer:
            return type.__call__(cls, inner_optimizer, *args, **kwargs)
        if isinstance(inner_optimizer, keras_loss_scale.optimizer_v2.OptimizerV2):
            return _LegacyNpuLossScaleOptimizer(inner_optimizer, *args, **kwargs)
        if isinstance(inner_optimizer, keras_loss_scale.optimizer.Optimizer):
            return _NpuLossScaleOptimizerV3(inner_optimizer, *args, **kwargs)
        raise NpuArgumentTypeError(
            "NpuLossScaleOptimizer: inner_optimizer must be a tf.keras optimizer, got "
            f"{type(inner_optimizer).__name__} {inner_optimizer!r}"
        )


class NpuLossScaleOptimizer(keras_loss_scale.BaseLossScaleOptimizer, metaclass=_Dispatch):
    """``NpuLossScaleOptimizer(inner_optimizer, dynamic=True, initial_scale=None, dynamic_growth_steps=None)``.

    Args:
      inner_optimizer: the tf.keras optimizer to wrap.
      dynamic: True for a loss scale that halves on a non-finite step and doubles after
        ``dynamic_growth_steps`` finite ones; False for the fixed ``initial_scale``.
      initial_scale: the first loss scale (Keras' default 2**15 when dynamic).
      dynamic_growth_steps: finite steps before the scale doubles (Keras' default 2000).
    """


class _NpuLossScaleOptimizerV3(_FiniteGate, keras_loss_scale.LossScaleOptimizerV3, NpuLossScaleOptimizer):
    pass


class _LegacyNpuLossScaleOptimizer(_FiniteGate, keras_loss_scale.LossScaleOptimizer, NpuLossScaleOptimizer):
    pass
