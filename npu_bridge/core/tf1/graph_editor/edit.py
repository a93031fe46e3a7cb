"""Editing of ``tf.contrib.graph_editor``: detaching a subgraph from its inputs / outputs (placeholders take their
place), connecting two subgraphs, bypassing one."""

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentTypeError
from npu_bridge.core.tf1.graph_editor import reroute, select, subgraph, util

__all__ = [
    "detach_control_inputs",
    "detach_control_outputs",
    "detach_inputs",
    "detach_outputs",
    "detach",
    "connect",
    "bypass",
]


def detach_control_inputs(sgv):
    """Removes the control inputs of the view's ops that come from outside it."""
    sgv = subgraph.make_view(sgv)
    for op in sgv.ops:
        outside = [cop for cop in op.control_inputs if cop not in sgv.ops]
        if outside:
            reroute.remove_control_inputs(op, outside)


def detach_control_outputs(sgv, control_outputs):
    """Removes the view's ops from the control inputs of the ops outside it.

    Args:
      sgv: what ``make_view`` takes.
      control_outputs: a ``util.ControlOutputs`` of the graph.
    Raises:
      TypeError: ``control_outputs`` is not a ``util.ControlOutputs``.
    """
    if not isinstance(control_outputs, util.ControlOutputs):
        raise NpuArgumentTypeError(
            f"control_outputs must be a graph_editor.ControlOutputs, got {type(control_outputs).__name__}"
        )
    control_outputs.update()
    sgv = subgraph.make_view(sgv)
    for op in sgv.ops:
        for user in control_outputs.get(op):
            if user not in sgv.ops:
                reroute.remove_control_inputs(user, op)


def detach_inputs(sgv, control_inputs=False):
    """Makes the view's ops read new placeholders instead of its inputs.

    Returns:
      ``(the view, the placeholders)`` (one per input, in order).
    """
    sgv = subgraph.make_view(sgv)
    with sgv.graph.as_default():
        placeholders = [
            tf.compat.v1.placeholder(dtype=tensor.dtype, name=util.placeholder_name(tensor)) for tensor in sgv.inputs
        ]
    reroute.swap_inputs(sgv, placeholders)
    if control_inputs:
        detach_control_inputs(sgv)
    return sgv, placeholders


def detach_outputs(sgv, control_outputs=None):
    """Makes the consumers of the view's outputs read new placeholders instead.

    Returns:
      ``(the view restricted to its consumed outputs, the placeholders)``.
    """
    sgv = subgraph.make_view(sgv)
    consumed = sgv.remap_outputs([index for index, tensor in enumerate(sgv.outputs) if tensor.consumers()])
    consumers = subgraph.SubGraphView(consumed.consumers())
    consumers = consumers.remap_inputs(
        [index for index, tensor in enumerate(consumers.inputs) if tensor in consumed.outputs]
    )
    with consumed.graph.as_default():
        placeholders = [util.make_placeholder_from_tensor(tensor) for tensor in consumers.inputs]
    reroute.swap_outputs(consumed, placeholders)
    if control_outputs is not None:
        detach_control_outputs(consumed, control_outputs)
    return consumed, placeholders


def detach(sgv, control_inputs=False, control_outputs=None, control_ios=None):
    """``detach_inputs`` and ``detach_outputs``.

    Returns:
      ``(the view, the input placeholders, the output placeholders)``.
    """
    control_inputs, control_outputs = select.check_cios(control_inputs, control_outputs, control_ios)
    _, inputs = detach_inputs(sgv, control_inputs)
    _, outputs = detach_outputs(sgv, control_outputs)
    return sgv, inputs, outputs


def connect(sgv0, sgv1, disconnect_first=False):
    """Makes ``sgv1``'s ops read ``sgv0``'s outputs as their inputs (in order).

    Returns:
      ``(sgv0, sgv1)`` as views.
    """
    sgv0, sgv1 = subgraph.make_view(sgv0), subgraph.make_view(sgv1)
    util.check_graphs(sgv0, sgv1)
    if disconnect_first:
        detach_outputs(sgv0)
    reroute.reroute_inputs(subgraph.SubGraphView(passthrough_ts=sgv0.outputs), sgv1)
    return sgv0, sgv1


def bypass(sgv):
    """Makes the consumers of the view's outputs read its inputs (in order) and detaches its inputs.

    Returns:
      ``(the view, the placeholders its ops now read)``.
    """
    sgv = subgraph.make_view(sgv)
    inputs = list(sgv.inputs)
    sgv, placeholders = detach_inputs(sgv)
    reroute.reroute_ts(inputs, sgv.outputs)
    return sgv, placeholders
