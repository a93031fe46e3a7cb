"""Upstream import path for Keras callbacks (facade)."""

from npu_bridge.pending import pending

NPUBroadcastGlobalVariablesCallback = pending("npu_bridge.estimator.npu.npu_callbacks.NPUBroadcastGlobalVariablesCallback", "collectives")
broadcast_global_variables = pending("npu_bridge.estimator.npu.npu_callbacks.broadcast_global_variables", "collectives")
