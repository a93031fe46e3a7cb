"""Upstream import path for ScopedGraphManager (facade)."""

from npu_bridge.core.runtime.graph_manager_scope import ScopedGraphManager

__all__ = ["ScopedGraphManager"]
