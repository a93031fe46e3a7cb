"""Upstream import path for attribute scopes (facade)."""

from npu_bridge.core.compute.attr_scopes import (
    disable_autofuse,
    keep_dtype_scope,
    limit_core_num_scope,
    npu_graph_slice_scope,
    npu_mem_type_scope,
    npu_optimizer_scope,
    npu_qos_label_scope,
    npu_recompute_scope,
    npu_stage_scope,
    npu_variable_scope,
    npu_weight_prefetch_scope,
    op_specified_engine_scope,
    subgraph_multi_dims_scope,
    without_npu_compile_scope,
)
from npu_bridge.core.options.config_objects import NpuExecutePlacement

__all__ = [
    "without_npu_compile_scope",
    "npu_variable_scope",
    "keep_dtype_scope",
    "npu_stage_scope",
    "npu_mem_type_scope",
    "npu_weight_prefetch_scope",
    "op_specified_engine_scope",
    "npu_qos_label_scope",
    "subgraph_multi_dims_scope",
    "npu_optimizer_scope",
    "npu_recompute_scope",
    "npu_graph_slice_scope",
    "disable_autofuse",
    "limit_core_num_scope",
    "NpuExecutePlacement",
]
