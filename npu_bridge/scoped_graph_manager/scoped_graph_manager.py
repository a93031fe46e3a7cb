"""Upstream import path for ScopedGraphManager (facade)."""

from npu_bridge.graph_manager_scope import ScopedGraphManager

__all__ = ["ScopedGraphManager"]
