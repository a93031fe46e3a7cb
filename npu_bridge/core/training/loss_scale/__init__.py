"""Loss scaling as on Ascend: loss-scale managers, overflow detection and the optimizers that use them.

managers              ``FixedLossScaleManager`` and ``ExponentialUpdateLossScaleManager``
overflow              whether a training step overflowed, decided the way Ascend decides it
scaling               the steps the optimizers share: scale the loss, unscale, apply unless the step overflowed
scaled_wrapper        the base of the loss-scaling optimizer wrappers
loss_scale_optimizer  ``NPULossScaleOptimizer``: scales the loss and skips overflowing steps
npu_optimizer         ``NPUOptimizer``: upstream's combined distributed + loss-scaling wrapper
"""
