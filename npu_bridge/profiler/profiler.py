"""Upstream import path for the scoped Profiler (facade)."""

from npu_bridge.core.profiling.profiler_scope import Profiler

__all__ = ["Profiler"]
