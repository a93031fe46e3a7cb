"""Upstream import path for NPULossScaleOptimizer (facade)."""

from npu_bridge.core.training.loss_scale.loss_scale_optimizer import NPULossScaleOptimizer

__all__ = ["NPULossScaleOptimizer"]
