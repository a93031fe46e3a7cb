"""``NPUOptimizer``: upstream's combined distributed + loss-scaling optimizer wrapper.

With ``is_loss_scale`` the loss is scaled by the manager's loss scale; with ``is_distributed`` (and more
than one rank) the gradients are averaged over the ranks; then they are unscaled. ``apply_gradients`` with
loss scaling reads the float-status register after the gradients, clears it, sums it over the ranks when
distributed, applies the gradients only when no overflow happened and updates the loss scale.
``is_tailing_optimization`` is accepted; it tunes Ascend's communication schedule and has no effect here.
"""

import tensorflow as tf

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.training.loss_scale import overflow, scaling
from npu_bridge.core.training.loss_scale.scaled_wrapper import LossScaleWrapper
from npu_bridge.core.world import world

v1 = tf.compat.v1


class NPUOptimizer(LossScaleWrapper):
    """Distributed and loss-scaling wrapper of an optimizer.

    Args:
      opt: the ``tf.compat.v1.train.Optimizer`` to wrap.
      loss_scale_manager: a loss-scale manager (needed with ``is_loss_scale``).
      is_distributed: average gradients over the ranks and agree on overflow.
      is_loss_scale: scale the loss and skip overflowing steps.
      is_tailing_optimization: accepted, no effect here.
      name: optimizer name (default "NPUOptimizer").
    Raises:
      ValueError: ``is_loss_scale`` without a manager, or ``opt`` is not an Optimizer.
    """

    def __init__(
        self,
        opt,
        loss_scale_manager=None,
        is_distributed=False,
        is_loss_scale=False,
        is_tailing_optimization=False,
        name=None,
    ):
        if not isinstance(opt, v1.train.Optimizer):
            raise NpuArgumentError(f'"opt" must be an instance of tf.compat.v1.train.Optimizer, but got: {type(opt)}')
        if is_loss_scale and loss_scale_manager is None:
            raise NpuArgumentError("is_loss_scale is True, loss_scale_manager can not be None")
        if is_tailing_optimization:
            log.info_once(
                "is_tailing_optimization",
                "NPUOptimizer(is_tailing_optimization=True): tunes Ascend's communication schedule; no effect here",
            )
        super().__init__(opt, name or "NPUOptimizer", loss_scale_manager)
        self._is_distributed = is_distributed
        self._is_loss_scale = is_loss_scale

    def compute_gradients(
        self,
        loss,
        var_list=None,
        gate_gradients=v1.train.Optimizer.GATE_OP,
        aggregation_method=None,
        colocate_gradients_with_ops=False,
        grad_loss=None,
    ):
        """See ``Optimizer.compute_gradients``; scales, averages over ranks and unscales as configured."""
        loss_scale = self._loss_scale_manager.get_loss_scale() if self._is_loss_scale else None
        if loss_scale is not None:
            loss = scaling.scaled_loss(loss, loss_scale)
        grads_and_vars = self._optimizer.compute_gradients(
            loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            grad_loss=grad_loss,
        )
        if self._is_distributed and world.environment_world().rank_size > 1:
            # The averaging collective of the distributed optimizers.
            from npu_bridge.core.training.distributed import averaging

            grads_and_vars = [
                (None if grad is None else averaging.allreduce(grad, average=True), var) for grad, var in grads_and_vars
            ]
        if loss_scale is not None:
            grads_and_vars = scaling.unscaled(grads_and_vars, loss_scale)
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies the gradients (with loss scaling: unless the step overflowed) and updates the loss scale."""
        grads_and_vars = list(grads_and_vars)
        if not self._is_loss_scale:
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        finite = overflow.status_is_clear([grad for grad, _ in grads_and_vars], self._is_distributed)
        finite = overflow.named_status(finite)
        return scaling.apply_if_finite(
            self._optimizer, grads_and_vars, global_step, name, finite, self._loss_scale_manager
        )
