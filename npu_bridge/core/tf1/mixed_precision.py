"""``tf.contrib.mixed_precision`` of TensorFlow 1.15: loss-scale managers and ``LossScaleOptimizer``.

npu_bridge's own managers and ``NPULossScaleOptimizer`` (``core/training/loss_scale/``) follow upstream's Ascend
variants, which differ from contrib's in ways a TF 1.15 script can see: the optimizer reads overflow from the
float-status register on the simulated Ascend backend (an overflow anywhere in the step, not only in the
gradients), the managers reject arguments contrib accepted, ``get_loss_scale`` returns a copy rather than the
variable, and the scale stops growing a little before the float32 limit. These classes build on the same helpers
and behave as contrib's did:

- ``LossScaleOptimizer.compute_gradients`` multiplies the loss by the loss scale and the gradients by its
  reciprocal; ``apply_gradients`` applies them (advancing ``global_step``) only when every gradient is finite, and
  updates the loss scale either way.
- ``FixedLossScaleManager(loss_scale)``: the scale never changes (ValueError below 1).
- ``ExponentialUpdateLossScaleManager``: after ``incr_every_n_steps`` consecutive finite steps the scale is
  multiplied by ``incr_ratio`` unless the product is not finite; after ``decr_every_n_nan_or_inf`` non-finite
  steps (not necessarily consecutive) it is multiplied by ``decr_ratio``, but not below 1. A non-finite step
  resets the count of finite ones; both counts restart when the scale changes.
"""

import abc

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.training.loss_scale import managers, overflow, scaling
from npu_bridge.core.training.loss_scale.scaled_wrapper import LossScaleWrapper

v1 = tf.compat.v1


class LossScaleManager(managers.LossScaleManager, metaclass=abc.ABCMeta):
    """The interface of a loss-scale manager (abstract, as in TensorFlow 1.15)."""

    @abc.abstractmethod
    def get_loss_scale(self):
        """Returns the loss scale as a float32 scalar tensor."""

    @abc.abstractmethod
    def update_loss_scale(self, finite_grads):
        """Returns an op that updates the loss scale.

        Args:
          finite_grads: bool scalar tensor, True when every gradient of the step is finite.
        """
        del finite_grads


class FixedLossScaleManager(LossScaleManager):
    """A loss scale that never changes.

    Args:
      loss_scale: a Python number >= 1.
    Raises:
      ValueError: ``loss_scale`` is below 1.
    """

    def __init__(self, loss_scale):
        if loss_scale < 1:
            raise NpuArgumentError(f"loss scale must be at least 1. (loss_scale={loss_scale!r})")
        self._loss_scale = tf.convert_to_tensor(loss_scale, dtype=tf.float32)

    def get_loss_scale(self):
        return self._loss_scale

    def update_loss_scale(self, finite_grads):
        del finite_grads
        return tf.no_op()


class ExponentialUpdateLossScaleManager(LossScaleManager):
    """A loss scale that grows after a run of finite steps and shrinks after non-finite ones.

    Creates three non-trainable variables, ``loss_scale`` (float32), ``good_steps`` and ``bad_steps`` (int32).

    Args:
      init_loss_scale: the first scale.
      incr_every_n_steps: consecutive finite steps before the scale grows.
      decr_every_n_nan_or_inf: non-finite steps before the scale shrinks.
      incr_ratio: growth factor.
      decr_ratio: shrink factor.
    """

    def __init__(self, init_loss_scale, incr_every_n_steps, decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.8):
        self._incr_every_n_steps = incr_every_n_steps
        self._decr_every_n_nan_or_inf = decr_every_n_nan_or_inf
        self._incr_ratio = incr_ratio
        self._decr_ratio = decr_ratio
        self._loss_scale = v1.Variable(
            tf.convert_to_tensor(init_loss_scale, tf.float32), name="loss_scale", dtype=tf.float32, trainable=False
        )
        self._num_good_steps = v1.Variable(0, name="good_steps", dtype=tf.int32, trainable=False)
        self._num_bad_steps = v1.Variable(0, name="bad_steps", dtype=tf.int32, trainable=False)

    def get_loss_scale(self):
        """Returns the loss-scale variable."""
        return self._loss_scale

    def update_loss_scale(self, finite_grads):
        """Returns an op that counts the step and changes the scale when a count is reached.

        Args:
          finite_grads: bool scalar tensor, True when every gradient of the step is finite.
        """

        def restart_counts():
            return tf.group(v1.assign(self._num_good_steps, 0), v1.assign(self._num_bad_steps, 0))

        def after_finite_step():
            def grow():
                grown = self._loss_scale * self._incr_ratio
                new_scale = tf.where(tf.math.is_finite(grown), grown, self._loss_scale)
                return tf.group(v1.assign(self._loss_scale, new_scale), restart_counts())

            return tf.cond(
                self._num_good_steps + 1 >= self._incr_every_n_steps,
                grow,
                lambda: v1.assign_add(self._num_good_steps, 1).op,
            )

        def after_non_finite_step():
            def shrink():
                shrunk = tf.maximum(1.0, self._loss_scale * self._decr_ratio)
                return tf.group(v1.assign(self._loss_scale, shrunk), restart_counts())

            def count():
                return tf.group(v1.assign_add(self._num_bad_steps, 1), v1.assign(self._num_good_steps, 0))

            return tf.cond(self._num_bad_steps + 1 >= self._decr_every_n_nan_or_inf, shrink, count)

        return tf.cond(finite_grads, after_finite_step, after_non_finite_step)


class LossScaleOptimizer(LossScaleWrapper):
    """Loss scaling around another optimizer; steps with a non-finite gradient are skipped.

    Args:
      opt: the optimizer to wrap (``compute_gradients`` / ``apply_gradients`` of ``tf.train.Optimizer``).
      loss_scale_manager: a ``LossScaleManager`` (any object with ``get_loss_scale`` and ``update_loss_scale``).
    """

    def __init__(self, opt, loss_scale_manager):
        super().__init__(opt, "LossScaleOptimizer", loss_scale_manager)

    def compute_gradients(
        self,
        loss,
        var_list=None,
        gate_gradients=v1.train.Optimizer.GATE_OP,
        aggregation_method=None,
        colocate_gradients_with_ops=False,
        grad_loss=None,
    ):
        """Gradients of ``loss * loss_scale``, multiplied by ``1 / loss_scale``; see ``Optimizer.compute_gradients``.

        A callable ``loss`` is called here in a graph, and stays a callable when executing eagerly.
        """
        if callable(loss) and not tf.executing_eagerly():
            loss = loss()
        return scaling.scaled_gradients(
            self._optimizer,
            loss,
            self._loss_scale_manager.get_loss_scale(),
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            grad_loss=grad_loss,
        )

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies the gradients when all are finite; updates the loss scale either way.

        Returns:
          An op that does both.
        """
        grads_and_vars = list(grads_and_vars)
        finite = overflow.grads_are_finite([grad for grad, _ in grads_and_vars])
        return scaling.apply_if_finite(
            self._optimizer, grads_and_vars, global_step, name, finite, self._loss_scale_manager
        )
