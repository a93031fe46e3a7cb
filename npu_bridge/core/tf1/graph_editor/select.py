"""Selecting ops and tensors of a graph for ``tf.contrib.graph_editor``: by regular expression, by name scope, by
walking the graph forward (to consumers) or backward (to inputs), and the boundary of a set of ops."""

import re

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.graph_editor import util

__all__ = [
    "can_be_regex",
    "make_regex",
    "filter_ts",
    "filter_ts_from_regex",
    "filter_ops",
    "filter_ops_from_regex",
    "get_name_scope_ops",
    "check_cios",
    "get_ops_ios",
    "compute_boundary_ts",
    "get_within_boundary_ops",
    "get_forward_walk_ops",
    "get_backward_walk_ops",
    "get_walks_intersection_ops",
    "get_walks_union_ops",
    "select_ops",
    "select_ts",
    "select_ops_and_ts",
]

_PATTERN = type(re.compile(""))


def can_be_regex(obj):
    """True for a string or a compiled regular expression."""
    return isinstance(obj, (str, _PATTERN))


def make_regex(obj):
    """A compiled regular expression from a string (or the compiled one given).

    Raises:
      ValueError: ``obj`` is neither.
    """
    if not can_be_regex(obj):
        raise NpuArgumentError(f"regex must be a string or a compiled regular expression, got {type(obj).__name__}")
    return re.compile(obj) if isinstance(obj, str) else obj


def _get_input_ts(ops):
    found = []
    for op in util.make_list_of_op(ops):
        util.concatenate_unique(found, op.inputs)
    return found


def _get_output_ts(ops):
    return [tensor for op in util.make_list_of_op(ops) for tensor in op.outputs]


def filter_ts(ops, positive_filter):
    """The input and output tensors of ``ops`` (a graph, an op or ops), inputs first, without repeats, kept where
    ``positive_filter(tensor)`` is true (``True`` keeps all)."""
    ops = util.make_list_of_op(ops)
    found = util.concatenate_unique(_get_input_ts(ops), _get_output_ts(ops))
    return found if positive_filter is True else [tensor for tensor in found if positive_filter(tensor)]


def filter_ts_from_regex(ops, regex):
    """``filter_ts`` keeping the tensors whose name ``regex`` matches anywhere (``re.search``)."""
    ops = util.make_list_of_op(ops)
    pattern = make_regex(regex)
    return filter_ts(ops, lambda tensor: pattern.search(tensor.name))


def filter_ops(ops, positive_filter):
    """The ops of ``ops`` (a graph, an op or ops) where ``positive_filter(op)`` is true (``True`` keeps all)."""
    ops = util.make_list_of_op(ops)
    return ops if positive_filter is True else [op for op in ops if positive_filter(op)]


def filter_ops_from_regex(ops, regex):
    """The ops of ``ops`` whose name ``regex`` matches anywhere (``re.search``)."""
    ops = util.make_list_of_op(ops)
    pattern = make_regex(regex)
    return filter_ops(ops, lambda op: pattern.search(op.name))


def get_name_scope_ops(ops, scope):
    """The ops of ``ops`` named ``scope`` or inside the name scope ``scope``."""
    scope = scope[:-1] if scope.endswith("/") else scope
    return filter_ops_from_regex(ops, f"^{scope}(/.*)?$")


def check_cios(control_inputs=False, control_outputs=None, control_ios=None):
    """Normalizes the control-dependency arguments of the walks: ``control_ios`` (a ``util.ControlOutputs``) means
    both control inputs and those control outputs.

    Returns:
      ``(control_inputs, control_outputs)``, the ``ControlOutputs`` updated.
    Raises:
      TypeError: ``control_outputs`` / ``control_ios`` is not a ``util.ControlOutputs``.
      ValueError: both are given.
    """
    if control_ios is not None:
        if not isinstance(control_ios, util.ControlOutputs):
            raise NpuArgumentTypeError(
                f"control_ios must be a graph_editor.ControlOutputs, got {type(control_ios).__name__}"
            )
        if control_outputs is not None:
            raise NpuArgumentError("control_outputs must be None when control_ios is given")
        control_inputs, control_outputs = True, control_ios
    elif control_outputs is not None and not isinstance(control_outputs, util.ControlOutputs):
        raise NpuArgumentTypeError(
            f"control_outputs must be a graph_editor.ControlOutputs, got {type(control_outputs).__name__}"
        )
    if control_outputs is not None:
        control_outputs.update()
    return control_inputs, control_outputs


def get_ops_ios(ops, control_inputs=False, control_outputs=None, control_ios=None):
    """The ops connected to ``ops``: the producers of their inputs and the consumers of their outputs (and their
    control outputs / control inputs when asked), in order, without repeats."""
    control_inputs, control_outputs = check_cios(control_inputs, control_outputs, control_ios)
    found = []
    for op in util.make_list_of_op(ops):
        util.concatenate_unique(found, [tensor.op for tensor in op.inputs])
        for tensor in op.outputs:
            util.concatenate_unique(found, tensor.consumers())
        if control_outputs is not None:
            util.concatenate_unique(found, control_outputs.get(op))
        if control_inputs:
            util.concatenate_unique(found, op.control_inputs)
    return found


def compute_boundary_ts(ops):
    """The boundary of the set ``ops``.

    Returns:
      ``(outside_input_ts, outside_output_ts, inside_ts)``: the inputs produced outside ``ops``; the outputs, less
      those only ``ops`` read; the tensors both produced and read inside ``ops``.
    """
    ops = util.make_list_of_op(ops)
    inputs, outputs = _get_input_ts(ops), _get_output_ts(ops)
    produced, members = frozenset(outputs), frozenset(ops)
    inside = [tensor for tensor in inputs if tensor in produced]
    only_inside = frozenset(tensor for tensor in inside if not set(tensor.consumers()) - members)
    inside_set = frozenset(inside)
    return (
        [tensor for tensor in inputs if tensor not in inside_set],
        [tensor for tensor in outputs if tensor not in only_inside],
        inside,
    )


def get_within_boundary_ops(
    ops, seed_ops, boundary_ops=(), inclusive=True, control_inputs=False, control_outputs=None, control_ios=None
):
    """The ops of ``ops`` reachable from ``seed_ops`` in either direction without crossing ``boundary_ops`` (which
    are part of the result if ``inclusive``).

    Raises:
      ValueError: a seed op is also a boundary op.
    """
    control_inputs, control_outputs = check_cios(control_inputs, control_outputs, control_ios)
    ops = util.make_list_of_op(ops)
    seeds = util.make_list_of_op(seed_ops, allow_graph=False, argument="seed_ops")
    boundary = set(util.make_list_of_op(boundary_ops, argument="boundary_ops"))
    reached = set(seeds)
    if boundary & reached:
        names = sorted(op.name for op in boundary & reached)
        raise NpuArgumentError(f"boundary_ops and seed_ops must not share ops; both hold {names}")
    wave = set(seeds)
    while wave:
        next_wave = set()
        for op in get_ops_ios(wave, control_inputs, control_outputs):
            if op in reached:
                continue
            if op in boundary:
                if inclusive:
                    reached.add(op)
            else:
                next_wave.add(op)
        reached |= next_wave
        wave = next_wave
    return [op for op in ops if op in reached]


def _seeds(seed_ops, from_tensors):
    """The seed ops of a walk: ``seed_ops`` as ops, or ``from_tensors(tensors)`` if they are tensors."""
    if not util.is_iterable(seed_ops):
        seed_ops = [seed_ops]
    seed_ops = list(seed_ops)
    if not seed_ops:
        return None
    if isinstance(seed_ops[0], tf.Tensor):
        return from_tensors(util.make_list_of_t(seed_ops, allow_graph=False, argument="seed_ops"))
    return util.make_list_of_op(seed_ops, allow_graph=False, argument="seed_ops")


def _walk(seeds, inclusive, within_ops, within_ops_fn, stop_at_ts, neighbours):
    stop = frozenset(util.make_list_of_t(stop_at_ts, argument="stop_at_ts"))
    seeds = frozenset(seeds)
    if within_ops:
        within_ops = frozenset(util.make_list_of_op(within_ops, allow_graph=False, argument="within_ops"))
        seeds &= within_ops
    else:
        within_ops = None

    def allowed(op):
        return (within_ops is None or op in within_ops) and (within_ops_fn is None or within_ops_fn(op))

    result = list(seeds)
    seen = set(seeds)
    wave = set(seeds)
    while wave:
        next_wave = {op for current in wave for op in neighbours(current, stop) if op not in seen and allowed(op)}
        util.concatenate_unique(result, next_wave)
        seen |= next_wave
        wave = next_wave
    return result if inclusive else [op for op in result if op not in seeds]


def get_forward_walk_ops(
    seed_ops, inclusive=True, within_ops=None, within_ops_fn=None, stop_at_ts=(), control_outputs=None
):
    """The ops reached from ``seed_ops`` going to consumers (and control outputs, given a ``util.ControlOutputs``).

    Args:
      seed_ops: an op or ops; tensors mean the ops consuming them.
      inclusive: whether the seed ops are part of the result.
      within_ops: if given, the walk stays in these ops (seeds outside them are dropped).
      within_ops_fn: if given, the walk only enters ops for which it returns true.
      stop_at_ts: tensors the walk does not go through.
      control_outputs: a ``util.ControlOutputs`` to follow control dependencies too.
    Returns:
      A list of ops, the seeds first, then wave by wave.
    Raises:
      TypeError: an argument holds something other than ops / tensors.
    """
    _, control_outputs = check_cios(False, control_outputs)
    seeds = _seeds(seed_ops, util.get_consuming_ops)
    if seeds is None:
        return []

    def neighbours(op, stop):
        found = [consumer for tensor in op.outputs if tensor not in stop for consumer in tensor.consumers()]
        return found + list(control_outputs.get(op)) if control_outputs is not None else found

    return _walk(seeds, inclusive, within_ops, within_ops_fn, stop_at_ts, neighbours)


def get_backward_walk_ops(
    seed_ops, inclusive=True, within_ops=None, within_ops_fn=None, stop_at_ts=(), control_inputs=False
):
    """The ops reached from ``seed_ops`` going to the producers of their inputs (and control inputs if asked).

    Args:
      seed_ops: an op or ops; tensors mean the ops producing them.
      inclusive: whether the seed ops are part of the result.
      within_ops: if given, the walk stays in these ops (seeds outside them are dropped).
      within_ops_fn: if given, the walk only enters ops for which it returns true.
      stop_at_ts: tensors the walk does not go through.
      control_inputs: follow control inputs too.
    Returns:
      A list of ops, the seeds first, then wave by wave.
    Raises:
      TypeError: an argument holds something other than ops / tensors.
    """
    seeds = _seeds(seed_ops, util.get_generating_ops)
    if seeds is None:
        return []

    def neighbours(op, stop):
        found = [tensor.op for tensor in op.inputs if tensor not in stop]
        return found + list(op.control_inputs) if control_inputs else found

    return _walk(seeds, inclusive, within_ops, within_ops_fn, stop_at_ts, neighbours)


def _both_walks(
    forward_seed_ops,
    backward_seed_ops,
    forward_inclusive,
    backward_inclusive,
    within_ops,
    within_ops_fn,
    control_inputs,
    control_outputs,
    control_ios,
):
    control_inputs, control_outputs = check_cios(control_inputs, control_outputs, control_ios)
    forward = get_forward_walk_ops(
        forward_seed_ops,
        inclusive=forward_inclusive,
        within_ops=within_ops,
        within_ops_fn=within_ops_fn,
        control_outputs=control_outputs,
    )
    backward = get_backward_walk_ops(
        backward_seed_ops,
        inclusive=backward_inclusive,
        within_ops=within_ops,
        within_ops_fn=within_ops_fn,
        control_inputs=control_inputs,
    )
    return forward, backward


def get_walks_intersection_ops(
    forward_seed_ops,
    backward_seed_ops,
    forward_inclusive=True,
    backward_inclusive=True,
    within_ops=None,
    within_ops_fn=None,
    control_inputs=False,
    control_outputs=None,
    control_ios=None,
):
    """The ops both after ``forward_seed_ops`` (forward walk) and before ``backward_seed_ops`` (backward walk), in
    the forward walk's order."""
    forward, backward = _both_walks(
        forward_seed_ops,
        backward_seed_ops,
        forward_inclusive,
        backward_inclusive,
        within_ops,
        within_ops_fn,
        control_inputs,
        control_outputs,
        control_ios,
    )
    backward = set(backward)
    return [op for op in forward if op in backward]


def get_walks_union_ops(
    forward_seed_ops,
    backward_seed_ops,
    forward_inclusive=True,
    backward_inclusive=True,
    within_ops=None,
    within_ops_fn=None,
    control_inputs=False,
    control_outputs=None,
    control_ios=None,
):
    """The ops after ``forward_seed_ops`` then those before ``backward_seed_ops``, without repeats."""
    forward, backward = _both_walks(
        forward_seed_ops,
        backward_seed_ops,
        forward_inclusive,
        backward_inclusive,
        within_ops,
        within_ops_fn,
        control_inputs,
        control_outputs,
        control_ios,
    )
    return util.concatenate_unique(forward, backward)


def _select_options(kwargs, own_restrict):
    options = {"graph": None, "positive_filter": None, "restrict_ops_regex": False, "restrict_ts_regex": False}
    for key, value in kwargs.items():
        if key not in options:
            raise NpuArgumentError(f"unknown keyword argument {key!r}; allowed: {', '.join(options)}")
        options[key] = value
    graph = options["graph"]
    if graph is not None and not isinstance(graph, tf.Graph):
        raise NpuArgumentTypeError(f"graph must be a tf.Graph, got {type(graph).__name__}")
    return graph, options["positive_filter"], options[own_restrict]


def _select(args, kwargs, kind):
    """``select_ops`` (kind "ops") / ``select_ts`` (kind "ts")."""
    graph, positive_filter, restrict = _select_options(kwargs, f"restrict_{kind}_regex")
    other = "ts" if kind == "ops" else "ops"
    from_regex = filter_ops_from_regex if kind == "ops" else filter_ts_from_regex
    found = []
    for arg in args:
        if can_be_regex(arg):
            if graph is None:
                raise NpuArgumentError(f"a regular expression ({arg!r}) needs the keyword argument graph")
            pattern = make_regex(arg)
            if pattern.pattern.startswith(f"(?#{other})"):
                continue
            if restrict and not pattern.pattern.startswith(f"(?#{kind})"):
                continue
            candidates = from_regex(graph, pattern)
        elif kind == "ops":
            candidates = util.make_list_of_op(arg, ignore_ts=True, argument="args")
        else:
            candidates = util.make_list_of_t(arg, ignore_ops=True, argument="args")
        for candidate in candidates:
            if candidate not in found and (positive_filter is None or positive_filter(candidate)):
                found.append(candidate)
    return found


def select_ops(*args, **kwargs):
    """Ops from ops, tensors (ignored), graphs and regular expressions on op names.

    Args:
      *args: ops, iterables of ops (tensors in them are ignored), graphs (all their ops) or regular expressions
        (strings or compiled; one starting with ``(?#ts)`` is skipped).
      **kwargs: ``graph`` (needed by regular expressions), ``positive_filter`` (a function keeping ops),
        ``restrict_ops_regex`` (only use regular expressions starting with ``(?#ops)``), ``restrict_ts_regex``
        (ignored here).
    Returns:
      A list of ops without repeats, in argument order.
    Raises:
      TypeError: ``graph`` is not a ``tf.Graph``; an argument holds something else than ops / tensors.
      ValueError: an unknown keyword argument; a regular expression without ``graph``.
    """
    return _select(args, kwargs, "ops")


def select_ts(*args, **kwargs):
    """Tensors from tensors, ops (ignored), graphs and regular expressions on tensor names: ``select_ops`` for
    tensors (``(?#ops)`` expressions are skipped, ``restrict_ts_regex`` keeps only ``(?#ts)`` ones)."""
    return _select(args, kwargs, "ts")


def select_ops_and_ts(*args, **kwargs):
    """``(select_ops(*args), select_ts(*args))``, the regular expressions for tensors being only those starting with
    ``(?#ts)``."""
    return (
        select_ops(*args, restrict_ops_regex=False, **kwargs),
        select_ts(*args, restrict_ts_regex=True, **kwargs),
    )
