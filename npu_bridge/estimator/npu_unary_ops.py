"""Upstream import path ``npu_bridge.estimator.npu_unary_ops``; users call ``npu_unary_ops.gelu(x)`` (facade)."""

from npu_bridge.core.compute import gen_ops as npu_unary_ops  # gelu, gelu_grad, ...

__all__ = ["npu_unary_ops"]
