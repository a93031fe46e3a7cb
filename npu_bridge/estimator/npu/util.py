"""Upstream import path ``npu_bridge.estimator.npu.util`` (facade)."""

from npu_bridge.core.compute.op_attrs import (
    keep_tensors_dtypes,
    set_graph_exec_config,
    set_op_input_tensor_multi_dims,
    set_op_tensor_max_range,
    set_op_tensor_max_size,
    variable_initializer_in_host,
)
from npu_bridge.core.npu_estimator.job_info import get_ranksize
from npu_bridge.core.runtime.arg_checks import (
    check_bool_type,
    check_nonnegative_integer,
    check_not_none,
    check_positive_integer,
    check_profiling_options,
)
from npu_bridge.core.runtime.job_values import get_value, global_dict_init, set_value
from npu_bridge.core.training.iteration_loop import IterationPerLoop, create_or_get_var, set_iteration_per_loop

__all__ = [
    "check_bool_type",
    "check_nonnegative_integer",
    "check_not_none",
    "check_positive_integer",
    "check_profiling_options",
    "get_ranksize",
    "IterationPerLoop",
    "create_or_get_var",
    "set_iteration_per_loop",
    "get_value",
    "global_dict_init",
    "set_value",
    "keep_tensors_dtypes",
    "set_graph_exec_config",
    "set_op_input_tensor_multi_dims",
    "set_op_tensor_max_range",
    "set_op_tensor_max_size",
    "variable_initializer_in_host",
    "npu_compile",
]


def npu_compile(sess, *fetches):
    """Runs ``fetches`` once in ``sess`` (upstream compiles the graph for the device by running it).

    Returns:
      What ``sess.run`` returns for ``fetches`` (a list).
    """
    return sess.run(list(fetches))
