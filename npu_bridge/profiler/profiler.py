"""Upstream import path for the scoped Profiler (facade)."""

from npu_bridge.pending import pending

Profiler = pending("npu_bridge.profiler.profiler.Profiler", "profiling")
