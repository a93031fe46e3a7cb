"""Upstream import path for ScopedGraphManager (facade)."""

from npu_bridge.pending import pending

ScopedGraphManager = pending("npu_bridge.scoped_graph_manager.scoped_graph_manager.ScopedGraphManager", "estimator")
