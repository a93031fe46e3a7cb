"""Upstream import path for attribute scopes (facade)."""

from npu_bridge.pending import pending

without_npu_compile_scope = pending("npu_bridge.estimator.npu.npu_scope.without_npu_compile_scope", "estimator")
npu_variable_scope = pending("npu_bridge.estimator.npu.npu_scope.npu_variable_scope", "estimator")
keep_dtype_scope = pending("npu_bridge.estimator.npu.npu_scope.keep_dtype_scope", "estimator")
npu_stage_scope = pending("npu_bridge.estimator.npu.npu_scope.npu_stage_scope", "estimator")
npu_mem_type_scope = pending("npu_bridge.estimator.npu.npu_scope.npu_mem_type_scope", "estimator")
npu_weight_prefetch_scope = pending("npu_bridge.estimator.npu.npu_scope.npu_weight_prefetch_scope", "estimator")
op_specified_engine_scope = pending("npu_bridge.estimator.npu.npu_scope.op_specified_engine_scope", "estimator")
npu_qos_label_scope = pending("npu_bridge.estimator.npu.npu_scope.npu_qos_label_scope", "estimator")
subgraph_multi_dims_scope = pending("npu_bridge.estimator.npu.npu_scope.subgraph_multi_dims_scope", "estimator")
npu_optimizer_scope = pending("npu_bridge.estimator.npu.npu_scope.npu_optimizer_scope", "estimator")
npu_recompute_scope = pending("npu_bridge.estimator.npu.npu_scope.npu_recompute_scope", "estimator")
npu_graph_slice_scope = pending("npu_bridge.estimator.npu.npu_scope.npu_graph_slice_scope", "estimator")
disable_autofuse = pending("npu_bridge.estimator.npu.npu_scope.disable_autofuse", "estimator")
limit_core_num_scope = pending("npu_bridge.estimator.npu.npu_scope.limit_core_num_scope", "estimator")
