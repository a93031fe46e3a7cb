"""The attribute scopes of upstream's ``npu_scope``: ops built inside carry NPU hints as node attributes.

Each scope stamps its attributes (``tf.Graph._attr_scope``) on every op created inside it, and they reach
the graph TensorFlow executes, where npu_bridge's passes can read them. ``keep_dtype_scope`` (``_keep_dtype``
= 1) is honoured by the precision rewrite: those ops keep their dtype. ``without_npu_compile_scope``
(``_without_npu_compile`` = true) asks the NPU to run ops on the host; here every op runs in TensorFlow on the
host already. The other scopes steer Ascend's graph engine (stages, memory types, prefetch, engines, QoS,
recomputation, slicing, fusion, core limits) and have no effect here. ``npu_recompute_scope`` opens the name
scope "NpuRecompute".
"""

import contextlib

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2

from npu_bridge.core.options.config_objects import NpuExecutePlacement
from npu_bridge.core.plan.pass_contract import KEEP_DTYPE_ATTR
from npu_bridge.core.runtime.errors import NpuArgumentError

WITHOUT_NPU_COMPILE_ATTR = "_without_npu_compile"


def _b(value):
    return attr_value_pb2.AttrValue(b=bool(value))


def _i(value):
    return attr_value_pb2.AttrValue(i=int(value))


def _s(value):
    return attr_value_pb2.AttrValue(s=tf.compat.as_bytes(str(value)))


@contextlib.contextmanager
def _attr_scope(attrs):
    with tf.compat.v1.get_default_graph()._attr_scope(attrs):
        yield


def _check_int(name, value, low=None):
    if isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low):
        limit = f" >= {low}" if low is not None else ""
        raise NpuArgumentError(f"{name} must be an int{limit}, got {value!r}")


def without_npu_compile_scope():
    """Ops inside run on the host instead of the NPU (``_without_npu_compile``; everything does here)."""
    return _attr_scope({WITHOUT_NPU_COMPILE_ATTR: _b(True)})


def keep_dtype_scope():
    """Ops inside keep their dtype under precision_mode (``_keep_dtype`` = 1; the precision rewrite skips them)."""
    return _attr_scope({KEEP_DTYPE_ATTR: _i(1)})


def npu_variable_scope(placement=NpuExecutePlacement.ALL):
    """Places variables inside on ``placement`` (``_variable_placement``; no effect here).

    Raises:
      ValueError: ``placement`` is not an ``NpuExecutePlacement``.
    """
    if not isinstance(placement, NpuExecutePlacement):
        raise NpuArgumentError(f"placement must be an NpuExecutePlacement, got {placement!r}")
    return _attr_scope({"_variable_placement": _s(placement.value)})


def npu_stage_scope(stage):
    """Assigns the ops inside to pipeline stage ``stage`` (``_stage_level``; no effect here)."""
    _check_int("stage", stage, 0)
    return _attr_scope({"_stage_level": _i(stage)})


def npu_mem_type_scope():
    """Asks for a special device memory type for the outputs inside (``_output_memory_type``; no effect here)."""
    return _attr_scope({"_output_memory_type": _i(1)})


def npu_weight_prefetch_scope(buffer_pool_id=0, buffer_pool_size=536870912):
    """Prefetches weights inside through a buffer pool (``_buffer_pool_id/size``; no effect here).

    Raises:
      ValueError: an id or size that is not a non-negative int.
    """
    _check_int("buffer_pool_id", buffer_pool_id, 0)
    _check_int("buffer_pool_size", buffer_pool_size, 0)
    return _attr_scope({"_buffer_pool_id": _i(buffer_pool_id), "_buffer_pool_size": _i(buffer_pool_size)})


def op_specified_engine_scope(engine_name, kernel_lib_name):
    """Runs the ops inside on a given graph-engine engine and kernel library (no effect here)."""
    return _attr_scope({"_specified_engine_name": _s(engine_name), "_specified_kernel_lib_name": _s(kernel_lib_name)})


def npu_qos_label_scope(label):
    """Gives the ops inside a QoS service label (``_qos_service_label``; no effect here)."""
    _check_int("label", label, 0)
    return _attr_scope({"_qos_service_label": _i(label)})


def subgraph_multi_dims_scope(index):
    """Marks the ops inside as part of multi-dims subgraph ``index`` (no effect here)."""
    _check_int("index", index, 0)
    return _attr_scope({"_subgraph_multi_dims_index": _i(index)})


def npu_optimizer_scope():
    """Marks the ops inside as optimizer ops (``_npu_optimizer``; no effect here)."""
    return _attr_scope({"_npu_optimizer": _b(True)})


@contextlib.contextmanager
def npu_recompute_scope():
    """Marks the ops inside for recomputation: name scope "NpuRecompute" (no effect here)."""
    with tf.compat.v1.name_scope("NpuRecompute"):
        yield


def npu_graph_slice_scope(slice_num=None):
    """Slices the ops inside into ``slice_num`` parts to save device memory (``_graph_slice_num``; no effect)."""
    if slice_num is not None:
        _check_int("slice_num", slice_num, 1)
    return _attr_scope({"_graph_slice_num": _i(slice_num if slice_num is not None else 0)})


def disable_autofuse():
    """Turns graph-engine automatic fusion off for the ops inside (``_disable_autofuse``; no effect here)."""
    return _attr_scope({"_disable_autofuse": _b(True)})


def limit_core_num_scope(op_aicore_num="0", op_vectorore_num="0"):
    """Limits the AI cores the ops inside use (``_op_aicore_num`` / ``_op_vectorcore_num``; no effect here)."""
    return _attr_scope({"_op_aicore_num": _s(op_aicore_num), "_op_vectorcore_num": _s(op_vectorore_num)})
