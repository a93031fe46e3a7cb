"""Upstream import path for DynamicRNN layers (facade)."""

from npu_bridge.pending import pending

DynamicRNN = pending("npu_bridge.estimator.npu.npu_dynamic_rnn.DynamicRNN", "compute")
DynamicGRUV2 = pending("npu_bridge.estimator.npu.npu_dynamic_rnn.DynamicGRUV2", "compute")
DynamicAUGRU = pending("npu_bridge.estimator.npu.npu_dynamic_rnn.DynamicAUGRU", "compute")
