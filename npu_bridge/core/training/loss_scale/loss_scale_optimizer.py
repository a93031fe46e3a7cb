"""``NPULossScaleOptimizer``: an optimizer wrapper that scales the loss and skips overflowing steps.

``compute_gradients`` multiplies the loss by the manager's loss scale and divides the gradients by it;
``apply_gradients`` applies them only when the step did not overflow and always updates the loss scale.
Overflow is read from the float-status register, unless the device is in INF/NaN mode
(``npu_plugin.is_inf_nan_enabled()``: CPU and GPU, or the simulated Ascend backend after
``set_device_sat_mode(1)``), where the gradients are checked for inf/NaN. A skipped step also does not advance
``global_step``. Upstream derives it from ``tf.contrib.mixed_precision.LossScaleOptimizer``, which TensorFlow 2
lacks; this is the same behaviour.
"""

import tensorflow as tf

from npu_bridge.core.device import device_mode
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.training.loss_scale import overflow, scaling
from npu_bridge.core.training.loss_scale.managers import FixedLossScaleManager
from npu_bridge.core.training.loss_scale.scaled_wrapper import LossScaleWrapper

v1 = tf.compat.v1


class NPULossScaleOptimizer(LossScaleWrapper):
    """Loss scaling around another optimizer.

    Args:
      opt: the ``tf.compat.v1.train.Optimizer`` to wrap.
      loss_scale_manager: a ``FixedLossScaleManager`` or ``ExponentialUpdateLossScaleManager``.
      is_distributed: sum the overflow status over all ranks so they skip the same steps.
    Raises:
      ValueError: ``opt`` is not an Optimizer.
    """

    def __init__(self, opt, loss_scale_manager, is_distributed=False):
        if not isinstance(opt, v1.train.Optimizer):
            raise NpuArgumentError(f'"opt" must be an instance of tf.compat.v1.train.Optimizer, but got: {type(opt)}')
        super().__init__(opt, "NPULossScaleOptimizer", loss_scale_manager)
        self._is_distributed = is_distributed

    def compute_gradients(
        self,
        loss,
        var_list=None,
        gate_gradients=v1.train.Optimizer.GATE_OP,
        aggregation_method=None,
        colocate_gradients_with_ops=False,
        grad_loss=None,
    ):
        """Gradients of ``loss * loss_scale``, divided by ``loss_scale``; see ``Optimizer.compute_gradients``."""
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
        """Applies the gradients unless the step overflowed; updates the loss scale either way.

        Returns:
          An op that does both.
        """
        grads_and_vars = list(grads_and_vars)
        manager = self._loss_scale_manager
        if isinstance(manager, FixedLossScaleManager) and not manager.get_enable_overflow_check():
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        grads = [grad for grad, _ in grads_and_vars]
        if device_mode.is_inf_nan_enabled():
            finite = overflow.grads_are_finite(grads)
        else:
            finite = overflow.status_is_clear(grads, self._is_distributed)
        finite = overflow.named_status(finite)
        return scaling.apply_if_finite(self._optimizer, grads_and_vars, global_step, name, finite, manager)
