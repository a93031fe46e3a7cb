"""Upstream import path for NPUSaver (facade)."""

from npu_bridge.core.npu_estimator.saver import NPUBulkSaverBuilder, NPUSaver

__all__ = ["NPUSaver", "NPUBulkSaverBuilder"]
