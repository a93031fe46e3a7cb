"""Upstream import path ``npu_bridge.estimator.npu.util`` (facade)."""

from npu_bridge.job_values import global_dict_init, get_value, set_value
from npu_bridge.pending import pending

_MODULE = "npu_bridge.estimator.npu.util"
set_iteration_per_loop = pending(f"{_MODULE}.set_iteration_per_loop", "estimator")
IterationPerLoop = pending(f"{_MODULE}.IterationPerLoop", "estimator")
set_graph_exec_config = pending(f"{_MODULE}.set_graph_exec_config", "estimator")
keep_tensors_dtypes = pending(f"{_MODULE}.keep_tensors_dtypes", "estimator")
set_op_tensor_max_range = pending(f"{_MODULE}.set_op_tensor_max_range", "estimator")
set_op_input_tensor_multi_dims = pending(f"{_MODULE}.set_op_input_tensor_multi_dims", "estimator")
set_op_tensor_max_size = pending(f"{_MODULE}.set_op_tensor_max_size", "estimator")
variable_initializer_in_host = pending(f"{_MODULE}.variable_initializer_in_host", "estimator")
npu_compile = pending(f"{_MODULE}.npu_compile", "estimator")
get_ranksize = pending(f"{_MODULE}.get_ranksize", "estimator")
create_or_get_var = pending(f"{_MODULE}.create_or_get_var", "estimator")
