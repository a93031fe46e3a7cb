"""Upstream import path for NPUSaver (facade)."""

from npu_bridge.pending import pending

NPUSaver = pending("npu_bridge.estimator.npu.npu_saver.NPUSaver", "estimator")
NPUBulkSaverBuilder = pending("npu_bridge.estimator.npu.npu_saver.NPUBulkSaverBuilder", "estimator")
