"""Upstream module path ``npu_device.train.optimizer`` (facade)."""

from npu_bridge.core.tf2.loss_scale import NpuLossScaleOptimizer

__all__ = ["NpuLossScaleOptimizer"]
