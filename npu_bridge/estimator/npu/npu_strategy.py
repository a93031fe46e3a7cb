"""Upstream import path for NPUStrategy (facade)."""

from npu_bridge.pending import pending

NPUStrategy = pending("npu_bridge.estimator.npu.npu_strategy.NPUStrategy", "estimator")
NPUExtended = pending("npu_bridge.estimator.npu.npu_strategy.NPUExtended", "estimator")
