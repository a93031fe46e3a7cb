"""Upstream import path for loss scale managers (facade)."""

from npu_bridge.core.training.loss_scale.managers import ExponentialUpdateLossScaleManager, FixedLossScaleManager

__all__ = ["FixedLossScaleManager", "ExponentialUpdateLossScaleManager"]
