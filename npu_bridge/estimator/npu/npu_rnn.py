"""Upstream import path for npu_dynamic_rnn (facade)."""

from npu_bridge.core.compute.static_rnn import npu_dynamic_rnn

__all__ = ["npu_dynamic_rnn"]
