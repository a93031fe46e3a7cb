"""``tf.contrib.graph_editor`` of the TF1 mode: TensorFlow 1.15's graph editor, written here for ``tf.compat.v1``
graphs of TensorFlow 2.21.

``util`` (lists of ops / tensors, ``ControlOutputs``, placeholders), ``select`` (regular expressions, forward and
backward walks), ``subgraph`` (``SubGraphView``, ``sgv``), ``reroute`` (``reroute_ts``, ``swap_ts``, control inputs),
``transform`` (``copy``, ``copy_with_input_replacements``, ``graph_replace``, ``Transformer``) and ``edit``
(``detach``, ``connect``, ``bypass``). ``sgv`` is ``make_view``, ``sgv_scope`` ``make_view_from_scope`` and ``ph``
``make_placeholder_from_dtype_and_shape``, as in 1.15.

Operations of TensorFlow 2.21 have no ``_outputs`` list, which scripts of 1.15's time read on ops the graph editor
copied (OpenAI's gradient checkpointing: ``info._transformed_ops[op]._outputs[0]``); importing this package gives
``tf.Operation`` a read-only ``_outputs`` (its ``outputs``) when it has none.
"""

import tensorflow as tf

from npu_bridge.core.tf1.graph_editor.edit import (
    bypass,
    connect,
    detach,
    detach_control_inputs,
    detach_control_outputs,
    detach_inputs,
    detach_outputs,
)
from npu_bridge.core.tf1.graph_editor.reroute import (
    add_control_inputs,
    remove_control_inputs,
    reroute_inputs,
    reroute_ios,
    reroute_outputs,
    reroute_ts,
    swap_inputs,
    swap_ios,
    swap_outputs,
    swap_ts,
)
from npu_bridge.core.tf1.graph_editor.select import (
    can_be_regex,
    check_cios,
    compute_boundary_ts,
    filter_ops,
    filter_ops_from_regex,
    filter_ts,
    filter_ts_from_regex,
    get_backward_walk_ops,
    get_forward_walk_ops,
    get_name_scope_ops,
    get_ops_ios,
    get_walks_intersection_ops,
    get_walks_union_ops,
    get_within_boundary_ops,
    make_regex,
    select_ops,
    select_ops_and_ts,
    select_ts,
)
from npu_bridge.core.tf1.graph_editor.subgraph import SubGraphView, make_view, make_view_from_scope
from npu_bridge.core.tf1.graph_editor.transform import (
    Transformer,
    TransformerInfo,
    assign_renamed_collections_handler,
    copy,
    copy_op_handler,
    copy_with_input_replacements,
    graph_replace,
    keep_t_if_possible_handler,
    replace_t_with_placeholder_handler,
    transform_op_if_inside_handler,
)
from npu_bridge.core.tf1.graph_editor.util import (
    ControlOutputs,
    get_consuming_ops,
    get_generating_ops,
    get_tensors,
    make_list_of_op,
    make_list_of_t,
    make_placeholder_from_dtype_and_shape,
    make_placeholder_from_tensor,
    placeholder_name,
)

sgv = make_view
sgv_scope = make_view_from_scope
ph = make_placeholder_from_dtype_and_shape

if not hasattr(tf.Operation, "_outputs"):
    tf.Operation._outputs = property(lambda op: op.outputs, doc="TensorFlow 1.x's list of the op's outputs.")

__all__ = [
    "ControlOutputs",
    "SubGraphView",
    "Transformer",
    "TransformerInfo",
    "add_control_inputs",
    "assign_renamed_collections_handler",
    "bypass",
    "can_be_regex",
    "check_cios",
    "compute_boundary_ts",
    "connect",
    "copy",
    "copy_op_handler",
    "copy_with_input_replacements",
    "detach",
    "detach_control_inputs",
    "detach_control_outputs",
    "detach_inputs",
    "detach_outputs",
    "filter_ops",
    "filter_ops_from_regex",
    "filter_ts",
    "filter_ts_from_regex",
    "get_backward_walk_ops",
    "get_consuming_ops",
    "get_forward_walk_ops",
    "get_generating_ops",
    "get_name_scope_ops",
    "get_ops_ios",
    "get_tensors",
    "get_walks_intersection_ops",
    "get_walks_union_ops",
    "get_within_boundary_ops",
    "graph_replace",
    "keep_t_if_possible_handler",
    "make_list_of_op",
    "make_list_of_t",
    "make_placeholder_from_dtype_and_shape",
    "make_placeholder_from_tensor",
    "make_regex",
    "make_view",
    "make_view_from_scope",
    "ph",
    "placeholder_name",
    "remove_control_inputs",
    "replace_t_with_placeholder_handler",
    "reroute_inputs",
    "reroute_ios",
    "reroute_outputs",
    "reroute_ts",
    "select_ops",
    "select_ops_and_ts",
    "select_ts",
    "sgv",
    "sgv_scope",
    "swap_inputs",
    "swap_ios",
    "swap_outputs",
    "swap_ts",
    "transform_op_if_inside_handler",
]
