"""Upstream import path for NPUStrategy (facade)."""

from npu_bridge.core.training.rank_sharded_strategy import NPUExtended, NPUStrategy

__all__ = ["NPUStrategy", "NPUExtended"]
