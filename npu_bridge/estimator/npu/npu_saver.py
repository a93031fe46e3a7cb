"""Upstream import path for NPUSaver (facade)."""

from npu_bridge.estimator_runtime.saver import NPUBulkSaverBuilder, NPUSaver

__all__ = ["NPUSaver", "NPUBulkSaverBuilder"]
