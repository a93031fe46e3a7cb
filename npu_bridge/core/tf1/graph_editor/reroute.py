"""Rerouting of ``tf.contrib.graph_editor``: making consumers read other tensors (``reroute_ts``, ``swap_ts``, and the
same between the inputs / outputs of two subgraph views), and editing control inputs.

Every change is an input of an existing op replaced in place (``Operation._update_input``), as in TensorFlow 1.15.
"""

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.graph_editor import subgraph, util

__all__ = [
    "swap_ts",
    "reroute_ts",
    "swap_inputs",
    "reroute_inputs",
    "swap_outputs",
    "reroute_outputs",
    "swap_ios",
    "reroute_ios",
    "remove_control_inputs",
    "add_control_inputs",
]

_SWAP, _A2B, _B2A = "swap", "a2b", "b2a"


def _directions(mode):
    return {_SWAP: (True, True), _A2B: (True, False), _B2A: (False, True)}[mode]


def _check_compatible(ts0, ts1):
    if len(ts0) != len(ts1):
        raise NpuArgumentError(f"ts0 and ts1 must have the same length, got {len(ts0)} and {len(ts1)}")
    for t0, t1 in zip(ts0, ts1):
        if not t0.dtype.is_compatible_with(t1.dtype):
            raise NpuArgumentError(
                f"ts0's {t0.name} ({t0.dtype.name}) and ts1's {t1.name} ({t1.dtype.name}) differ in dtype"
            )
        if not t0.get_shape().is_compatible_with(t1.get_shape()):
            raise NpuArgumentError(
                f"ts0's {t0.name} (shape {t0.get_shape()}) and ts1's {t1.name} (shape {t1.get_shape()}) have "
                "incompatible shapes"
            )


def _reroute_t(new, old, consumers, can_modify, cannot_modify):
    """Makes ``consumers`` of ``old`` (restricted by can/cannot_modify) read ``new``; returns the inputs changed."""
    if can_modify is not None:
        consumers &= can_modify
    if cannot_modify is not None:
        consumers -= cannot_modify
    positions = {op: [index for index, tensor in enumerate(op.inputs) if tensor is old] for op in consumers}
    changed = 0
    for op, indices in positions.items():
        for index in indices:
            op._update_input(index, new)
            changed += 1
    return changed


def _reroute_ts(ts0, ts1, mode, can_modify=None, cannot_modify=None):
    forward, backward = _directions(mode)
    ts0 = util.make_list_of_t(ts0, argument="ts0")
    ts1 = util.make_list_of_t(ts1, argument="ts1")
    _check_compatible(ts0, ts1)
    if cannot_modify is not None:
        cannot_modify = frozenset(util.make_list_of_op(cannot_modify, argument="cannot_modify"))
    if can_modify is not None:
        can_modify = frozenset(util.make_list_of_op(can_modify, argument="can_modify"))
    # consumers are read before any change: a tensor may appear several times in ts0 / ts1
    consumers = [(set(t0.consumers()), set(t1.consumers())) for t0, t1 in zip(ts0, ts1)]
    changed = 0
    for t0, t1, (consumers0, consumers1) in zip(ts0, ts1, consumers):
        if t0 is t1:
            continue
        if forward:
            changed += _reroute_t(t0, t1, consumers1, can_modify, cannot_modify)
        if backward:
            changed += _reroute_t(t1, t0, consumers0, can_modify, cannot_modify)
    return changed


def swap_ts(ts0, ts1, can_modify=None, cannot_modify=None):
    """Swaps the consumers of ``ts0[i]`` and ``ts1[i]``: those of one read the other.

    Returns:
      The number of op inputs changed.
    Raises:
      TypeError / ValueError: as ``reroute_ts``.
    """
    return _reroute_ts(ts0, ts1, _SWAP, can_modify, cannot_modify)


def reroute_ts(ts0, ts1, can_modify=None, cannot_modify=None):
    """Makes the consumers of ``ts1[i]`` read ``ts0[i]`` instead (``ts0`` keeps its own consumers).

    Args:
      ts0: the new tensor(s).
      ts1: the tensor(s) whose consumers change.
      can_modify: if given, only these ops are changed.
      cannot_modify: if given, these ops are not changed.
    Returns:
      The number of op inputs changed.
    Raises:
      TypeError: ``ts0`` / ``ts1`` hold non-tensors, ``can_modify`` / ``cannot_modify`` non-ops.
      ValueError: ``ts0`` and ``ts1`` differ in length, or a pair in dtype or shape; tensors of several graphs.
    """
    return _reroute_ts(ts0, ts1, _A2B, can_modify, cannot_modify)


def _reroute_sgv_remap(sgv0, sgv1, mode):
    """Updates the two views in place so that their inputs are what they read after the reroute."""
    forward, backward = _directions(mode)
    for index, view in enumerate((sgv0, sgv1)):
        if not isinstance(view, subgraph.SubGraphView):
            raise NpuArgumentTypeError(f"sgv{index} must be a SubGraphView, got {type(view).__name__}")
    util.check_graphs(sgv0, sgv1)
    new0, new1 = sgv0.copy(), sgv1.copy()
    if forward and backward:
        new0._input_ts, new1._input_ts = new1._input_ts, new0._input_ts
        new0._passthrough_ts, new1._passthrough_ts = new1._passthrough_ts, new0._passthrough_ts
    elif forward:
        new1._input_ts, new1._passthrough_ts = list(new0._input_ts), list(new0._passthrough_ts)
    else:
        new0._input_ts, new0._passthrough_ts = list(new1._input_ts), list(new1._passthrough_ts)

    def follow_passthroughs(source, target):
        for index, tensor in enumerate(target._output_ts):
            if tensor in source._passthrough_ts:
                target._output_ts[index] = target._input_ts[source._input_ts.index(tensor)]

    if forward:
        follow_passthroughs(new0, new1)
    if backward:
        follow_passthroughs(new1, new0)
    sgv0._assign_from(new0)
    sgv1._assign_from(new1)


def _reroute_sgv_inputs(sgv0, sgv1, mode):
    sgv0, sgv1 = subgraph.make_view(sgv0), subgraph.make_view(sgv1)
    util.check_graphs(sgv0, sgv1)
    can_modify = sgv0.ops + sgv1.ops
    can_modify += util.get_consuming_ops(sgv0.passthroughs)
    can_modify += util.get_consuming_ops(sgv1.passthroughs)
    _reroute_ts(sgv0.inputs, sgv1.inputs, mode, can_modify=can_modify)
    _reroute_sgv_remap(sgv0, sgv1, mode)
    return sgv0, sgv1


def _reroute_sgv_outputs(sgv0, sgv1, mode):
    sgv0, sgv1 = subgraph.make_view(sgv0), subgraph.make_view(sgv1)
    util.check_graphs(sgv0, sgv1)
    _reroute_ts(sgv0.outputs, sgv1.outputs, mode, cannot_modify=sgv0.ops + sgv1.ops)
    return sgv0, sgv1


def _reroute_sgv(sgv0, sgv1, mode):
    _reroute_sgv_outputs(sgv0, sgv1, mode)
    _reroute_sgv_inputs(sgv0, sgv1, mode)
    return sgv0, sgv1


def swap_inputs(sgv0, sgv1):
    """Swaps the inputs of two subgraph views (anything ``make_view`` takes); returns the two views."""
    return _reroute_sgv_inputs(sgv0, sgv1, _SWAP)


def reroute_inputs(sgv0, sgv1):
    """Makes ``sgv1``'s ops read ``sgv0``'s inputs; returns the two views."""
    return _reroute_sgv_inputs(sgv0, sgv1, _A2B)


def swap_outputs(sgv0, sgv1):
    """Swaps the consumers of the outputs of two subgraph views; returns the two views."""
    return _reroute_sgv_outputs(sgv0, sgv1, _SWAP)


def reroute_outputs(sgv0, sgv1):
    """Makes the consumers of ``sgv1``'s outputs read ``sgv0``'s outputs; returns the two views."""
    return _reroute_sgv_outputs(sgv0, sgv1, _A2B)


def swap_ios(sgv0, sgv1):
    """``swap_outputs`` then ``swap_inputs``."""
    return _reroute_sgv(sgv0, sgv1, _SWAP)


def reroute_ios(sgv0, sgv1):
    """``reroute_outputs`` then ``reroute_inputs``."""
    return _reroute_sgv(sgv0, sgv1, _A2B)


def _check_op(op):
    if not isinstance(op, tf.Operation):
        raise NpuArgumentTypeError(f"op must be a tf.Operation, got {type(op).__name__}")


def remove_control_inputs(op, cops):
    """Removes the control inputs ``cops`` (an op or ops) from ``op``.

    Raises:
      TypeError: ``op`` is not a ``tf.Operation`` or ``cops`` holds a non-op.
      ValueError: one of ``cops`` is not a control input of ``op``.
    """
    _check_op(op)
    cops = util.make_list_of_op(cops, allow_graph=False, argument="cops")
    current = list(op.control_inputs)
    for cop in cops:
        if cop not in current:
            raise NpuArgumentError(f"cops: {cop.name} is not a control input of {op.name}")
    op._remove_all_control_inputs()
    op._add_control_inputs([cop for cop in current if cop not in cops])


def add_control_inputs(op, cops):
    """Adds the control inputs ``cops`` (an op or ops) to ``op``: it then runs after them.

    Raises:
      TypeError: ``op`` is not a ``tf.Operation`` or ``cops`` holds a non-op.
      ValueError: one of ``cops`` is already a control input of ``op``.
    """
    _check_op(op)
    cops = util.make_list_of_op(cops, allow_graph=False, argument="cops")
    current = list(op.control_inputs)
    for cop in cops:
        if cop in current:
            raise NpuArgumentError(f"cops: {cop.name} is already a control input of {op.name}")
    op._add_control_inputs(cops)
