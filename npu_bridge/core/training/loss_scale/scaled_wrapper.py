"""The base of the loss-scaling optimizer wrappers (``NPULossScaleOptimizer``, ``NPUOptimizer``)."""

from npu_bridge.core.training.loss_scale import managers
from npu_bridge.core.training.wrapped_optimizer import WrappedOptimizer


class LossScaleWrapper(WrappedOptimizer):
    """A wrapped optimizer that keeps a loss-scale manager; the manager's variables are the wrapper's own.

    Args:
      optimizer: the optimizer to wrap.
      name: this optimizer's name.
      loss_scale_manager: a loss-scale manager, or None.
    """

    def __init__(self, optimizer, name, loss_scale_manager):
        super().__init__(optimizer, name)
        self._loss_scale_manager = loss_scale_manager

    def _own_variables(self):
        # The manager's state (loss_scale, good_steps, bad_steps): tf_keras initializes only what variables() lists.
        return managers.manager_variables(self._loss_scale_manager)
