"""Upstream import path ``npu_bridge.estimator.npu_unary_ops``; users call ``npu_unary_ops.gelu(x)`` (facade)."""

import types

from npu_bridge.pending import pending

npu_unary_ops = types.SimpleNamespace(
    gelu=pending("npu_bridge.estimator.npu_unary_ops.npu_unary_ops.gelu", "compute"))
