"""``npu_device.train.optimizer.NpuLossScaleOptimizer``: Keras loss scaling that skips every overflowing step.

It is tf_keras' ``LossScaleOptimizer`` for the optimizer it wraps (the optimizer generation decides the class,
as in Keras), plus the adapter's additions: a bool variable ``last_step_finite`` assigned at every step, and a
static loss scale (``dynamic=False``) that also skips an overflowing step, where Keras would apply it.

Whether a step overflowed is decided as the adapter decides it (``npu_bridge.core.training.loss_scale.overflow``):
from the float-status register on the simulated Ascend backend in saturation mode, where an fp16 overflow
saturates to a finite value and only the register tells (summed over the ranks in a multi-rank job), else from
the gradients (cpu, gpu, INF/NaN mode), where Keras' own rule applies. In saturation mode the step is gated and the
dynamic scale updated here, by Keras' rule on that decision.
"""

import tensorflow as tf
from tf_keras.src.mixed_precision import loss_scale_optimizer as keras_loss_scale

from npu_bridge.core.device import device_mode
from npu_bridge.core.runtime.errors import NpuArgumentTypeError
from npu_bridge.core.tf2 import device
from npu_bridge.core.training.loss_scale import overflow


def _step_is_finite(grads):
    if device_mode.is_inf_nan_enabled():
        return overflow.grads_are_finite(grads)
    handle = device.opened()
    # The NpuOptimizer pass makes the register's read wait for everything else in the step that can set it (the
    # returned loss included: optimizers/graph/status_order.h).
    return overflow.status_is_clear(grads, handle is not None and handle.workers_num > 1)


def _update_dynamic_scale(state, finite):
    """Keras' dynamic rule, driven by ``finite``: after ``growth_steps`` finite steps the scale grows by the
    multiplier (unless that is not finite), after an overflowing step it shrinks by it (not below 1); either
    resets the counter."""

    def grow():
        larger = state.current_loss_scale * state.multiplier
        keep = tf.where(tf.math.is_finite(larger), larger, state.current_loss_scale)
        return tf.group(state.current_loss_scale.assign(keep), state.counter.assign(0))

    def after_finite():
        return tf.cond(state.counter + 1 >= state.growth_steps, grow, lambda: tf.group(state.counter.assign_add(1)))

    def after_overflow():
        smaller = tf.maximum(state.current_loss_scale / state.multiplier, 1.0)
        return tf.group(state.counter.assign(0), state.current_loss_scale.assign(smaller))

    return tf.cond(finite, after_finite, after_overflow)


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
        """Applies the gradients unless the step overflowed (also with a static loss scale).

        Args:
          grads_and_vars, *args, **kwargs: as Keras' ``apply_gradients``.
        """
        grads_and_vars = list(grads_and_vars)
        finite = _step_is_finite([g for g, _ in grads_and_vars])
        self.last_step_finite.assign(finite)
        if device_mode.is_inf_nan_enabled():  # the gradients tell: Keras' own dynamic rule sees what we saw
            apply = super().apply_gradients
            if self.dynamic:
                return apply(grads_and_vars, *args, **kwargs)
        else:  # only the register tells (saturated gradients are finite): the rule is applied here
            if self.dynamic:
                _update_dynamic_scale(self._loss_scale, finite)

            def apply(pairs, *args, **kwargs):
                return self.inner_optimizer.apply_gradients(pairs, *args, **kwargs)

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
