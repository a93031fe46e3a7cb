"""The ``util`` functions that stamp NPU hints on existing ops (the scopes in ``attr_scopes`` do it while
building).

``keep_tensors_dtypes`` marks ops ``_keep_dtype`` = 1, which the precision rewrite honours.
``set_graph_exec_config`` and the ``set_op_*`` functions describe dynamic shapes and graph kinds to Ascend's
graph engine; they validate their arguments and stamp the attributes, which have no effect here (TensorFlow
runs any shape).
"""

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2

from npu_bridge.core.options.config_objects import ExperimentalConfig
from npu_bridge.core.plan.pass_contract import KEEP_DTYPE_ATTR
from npu_bridge.core.runtime.errors import NpuArgumentError

_EXECUTE_MODES = ("lazy_recompile", "dynamic_execute")


def _ops_of(fetch, graph=None):
    """The ops behind a fetch: an Operation, Tensor, tensor/op name, or a list/tuple of them."""
    graph = graph or tf.compat.v1.get_default_graph()
    if isinstance(fetch, (list, tuple)):
        return [op for item in fetch for op in _ops_of(item, graph)]
    if isinstance(fetch, tf.Operation):
        return [fetch]
    if isinstance(fetch, (tf.Tensor, tf.Variable)):
        return [fetch.op]
    if isinstance(fetch, str):
        element = graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        return [element if isinstance(element, tf.Operation) else element.op]
    raise NpuArgumentError(f"fetch must be an Operation, Tensor, name, or a list/tuple of them, got {fetch!r}")


def _set(op, name, **value):
    op._set_attr(name, attr_value_pb2.AttrValue(**value))


def set_graph_exec_config(
    fetch,
    dynamic_input=False,
    dynamic_graph_execute_mode="dynamic_execute",
    dynamic_inputs_shape_range=None,
    is_train_graph=False,
    experimental_config=None,
):
    """Stamps graph execution hints on the ops of ``fetch`` and returns ``fetch``.

    Args:
      fetch: an Operation, Tensor, name, or list/tuple of them.
      dynamic_input: whether the graph has dynamic inputs.
      dynamic_graph_execute_mode: "lazy_recompile" or "dynamic_execute".
      dynamic_inputs_shape_range: e.g. "getnext:[128,3~5,-1]".
      is_train_graph: whether this is the training graph.
      experimental_config: an ``ExperimentalConfig``; its graph_memory_optimize_config.recompute is stamped.
    Returns:
      ``fetch``.
    Raises:
      ValueError: a bad fetch, execute mode or experimental_config.
    """
    if dynamic_graph_execute_mode not in _EXECUTE_MODES:
        raise NpuArgumentError(
            f"dynamic_graph_execute_mode should be lazy_recompile or dynamic_execute, got "
            f"{dynamic_graph_execute_mode!r}"
        )
    if experimental_config is not None and not isinstance(experimental_config, ExperimentalConfig):
        raise NpuArgumentError(
            f'"experimental_config" must be provided with type "ExperimentalConfig", got '
            f"{type(experimental_config).__name__}"
        )
    memory = experimental_config.graph_memory_optimize_config if experimental_config is not None else None
    for op in _ops_of(fetch):
        _set(op, "_graph_dynamic_input", b=bool(dynamic_input))
        _set(op, "_graph_dynamic_graph_execute_mode", s=tf.compat.as_bytes(dynamic_graph_execute_mode))
        _set(op, "_graph_dynamic_inputs_shape_range", s=tf.compat.as_bytes(dynamic_inputs_shape_range or ""))
        _set(op, "_is_train_graph", b=bool(is_train_graph))
        if memory is not None and memory.recompute is not None:
            _set(op, "_recompute_mode", s=tf.compat.as_bytes(memory.recompute))
    return fetch


def keep_tensors_dtypes(graph, input_tensors):
    """Marks the ops producing ``input_tensors`` with ``_keep_dtype`` = 1 (the precision rewrite skips them).

    Args:
      graph: the ``tf.Graph``.
      input_tensors: tensor names (e.g. "dense/MatMul:0") or tensors.
    Raises:
      KeyError, ValueError: a name that is not in ``graph``.
    """
    for tensor in input_tensors:
        op = graph.as_graph_element(tensor, allow_tensor=True, allow_operation=True)
        _set(op if isinstance(op, tf.Operation) else op.op, KEEP_DTYPE_ATTR, i=1)


def _shape_text(value, name):
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool) for d in value):
        return ",".join(str(d) for d in value)
    raise NpuArgumentError(f"{name} must be a string or a list of ints, got {value!r}")


def set_op_tensor_max_range(tensor, max_shape):
    """Stamps the largest shape ``tensor`` can take (``_op_max_shape``; no effect here)."""
    _set(_ops_of(tensor)[0], "_op_max_shape", s=tf.compat.as_bytes(_shape_text(max_shape, "max_shape")))


def set_op_input_tensor_multi_dims(tensor, input_shape, input_dims):
    """Stamps the dynamic-dims profiles of ``tensor`` (``_input_shape`` / ``_input_dims``; no effect here)."""
    op = _ops_of(tensor)[0]
    _set(op, "_input_shape", s=tf.compat.as_bytes(_shape_text(input_shape, "input_shape")))
    _set(op, "_input_dims", s=tf.compat.as_bytes(_shape_text(input_dims, "input_dims")))


def set_op_tensor_max_size(tensor, max_size):
    """Stamps the largest byte size of ``tensor`` (``_op_max_size``; no effect here).

    Raises:
      ValueError: ``max_size`` is not a positive int.
    """
    if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size <= 0:
        raise NpuArgumentError(f"max_size must be a positive int, got {max_size!r}")
    _set(_ops_of(tensor)[0], "_op_max_size", i=max_size)


def variable_initializer_in_host(var_list):
    """Returns the initializer of ``var_list`` (upstream runs it on the host; everything runs there here)."""
    return tf.compat.v1.variables_initializer(var_list)
