"""Upstream import path for NPUSaver (facade)."""

from npu_bridge.core.estimator.saver import NPUBulkSaverBuilder, NPUSaver

__all__ = ["NPUSaver", "NPUBulkSaverBuilder"]
