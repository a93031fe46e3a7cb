"""Upstream import path for NPULossScaleOptimizer (facade)."""

from npu_bridge.pending import pending

NPULossScaleOptimizer = pending("npu_bridge.estimator.npu.npu_loss_scale_optimizer.NPULossScaleOptimizer", "compute")
