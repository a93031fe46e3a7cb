"""Upstream import path for TBE vector ops (facade)."""

from npu_bridge.pending import pending

lamb_apply_optimizer_assign = pending("npu_bridge.tbe.npu_vector_ops.lamb_apply_optimizer_assign", "compute")
lamb_apply_weight_assign = pending("npu_bridge.tbe.npu_vector_ops.lamb_apply_weight_assign", "compute")
