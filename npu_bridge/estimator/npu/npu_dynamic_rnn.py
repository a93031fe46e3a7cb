"""Upstream import path for DynamicRNN layers (facade)."""

from npu_bridge.core.compute.dynamic_rnn import (
    BIDIRECTIONAL,
    REDIRECTIONAL,
    UNIDIRECTIONAL,
    DynamicAUGRU,
    DynamicGRUV2,
    DynamicRNN,
)

__all__ = ["DynamicRNN", "DynamicGRUV2", "DynamicAUGRU", "UNIDIRECTIONAL", "BIDIRECTIONAL", "REDIRECTIONAL"]
