"""Upstream import path for NPULossScaleOptimizer (facade); upstream's module imports FixedLossScaleManager too."""

from npu_bridge.core.training.loss_scale.loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.core.training.loss_scale.managers import FixedLossScaleManager

__all__ = ["NPULossScaleOptimizer", "FixedLossScaleManager"]
