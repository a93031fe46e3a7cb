"""Upstream import path for loss scale managers (facade)."""

from npu_bridge.pending import pending

FixedLossScaleManager = pending("npu_bridge.estimator.npu.npu_loss_scale_manager.FixedLossScaleManager", "compute")
ExponentialUpdateLossScaleManager = pending("npu_bridge.estimator.npu.npu_loss_scale_manager.ExponentialUpdateLossScaleManager", "compute")
