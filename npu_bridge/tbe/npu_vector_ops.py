"""Upstream import path for TBE vector ops (facade)."""

from npu_bridge.core.runtime.unsupported import unsupported

__all__ = ["lamb_apply_optimizer_assign", "lamb_apply_weight_assign"]

_REASON = (
    "a fused LAMB update kernel of the NPU whose intermediate layout is internal to it; use a LAMB optimizer "
    "written with TensorFlow ops"
)
lamb_apply_optimizer_assign = unsupported("npu_bridge.tbe.npu_vector_ops.lamb_apply_optimizer_assign", _REASON)
lamb_apply_weight_assign = unsupported("npu_bridge.tbe.npu_vector_ops.lamb_apply_weight_assign", _REASON)
