"""Upstream import path for npu_dynamic_rnn (facade)."""

from npu_bridge.pending import pending

npu_dynamic_rnn = pending("npu_bridge.estimator.npu.npu_rnn.npu_dynamic_rnn", "compute")
