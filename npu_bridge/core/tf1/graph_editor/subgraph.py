"""``SubGraphView`` of ``tf.contrib.graph_editor``: a set of ops of one graph with its input and output tensors
(ordered, remappable) and passthrough tensors (inputs that are also outputs); ``make_view`` (``ge.sgv``) builds one
from ops, tensors, graphs and regular expressions."""

import copy
import io

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.graph_editor import select, util

__all__ = ["SubGraphView", "make_view", "make_view_from_scope"]


def _indices(indices_or_ts, ts, argument):
    """Indices into ``ts`` from indices or tensors of it."""
    indices = []
    for item in indices_or_ts:
        if isinstance(item, int):
            indices.append(item)
        elif item in ts:
            indices.append(ts.index(item))
        else:
            raise NpuArgumentError(f"{argument}: {getattr(item, 'name', item)!r} is not one of the view's tensors")
    return indices


def _check_range(indices, count, repetition, argument):
    for index in indices:
        if not 0 <= index < count:
            raise NpuArgumentError(f"{argument}: index {index} is outside [0, {count})")
    if not repetition and len(set(indices)) != len(indices):
        raise NpuArgumentError(f"{argument}: {indices} repeats an index, which is not allowed for inputs")


class SubGraphView:
    """A subgraph: ops of one graph, plus passthrough tensors.

    Its inputs are the tensors its ops read from outside, its outputs the tensors its ops produce that something
    outside reads (or that nothing reads), then the passthroughs in both lists. The remap methods return a view
    whose inputs / outputs are reordered or selected, which is what ``reroute`` and ``connect`` pair up.

    Args:
      inside_ops: an op or ops (the view's ops).
      passthrough_ts: a tensor or tensors; those that are already inputs, outputs or inside tensors are ignored.
    Raises:
      TypeError: ``inside_ops`` holds a non-op or ``passthrough_ts`` a non-tensor.
      ValueError: they belong to several graphs.
    """

    def __init__(self, inside_ops=(), passthrough_ts=()):
        inside_ops = util.make_list_of_op(inside_ops, argument="inside_ops")
        passthrough_ts = util.make_list_of_t(passthrough_ts, argument="passthrough_ts")
        if not inside_ops and not passthrough_ts:
            self._graph, self._ops = None, []
            self._passthrough_ts, self._input_ts, self._output_ts = [], [], []
            return
        self._graph = util.get_unique_graph(inside_ops + passthrough_ts, argument="inside_ops + passthrough_ts")
        self._ops = inside_ops
        inputs, outputs, inside = select.compute_boundary_ts(inside_ops)
        known = frozenset(inputs + outputs + inside)
        self._passthrough_ts = [tensor for tensor in passthrough_ts if tensor not in known]
        self._input_ts = inputs + self._passthrough_ts
        self._output_ts = outputs + self._passthrough_ts

    def __copy__(self):
        result = type(self).__new__(type(self))
        for key, value in self.__dict__.items():
            setattr(result, key, value if key == "_graph" else list(value))
        return result

    def copy(self):
        """A copy (its lists are new)."""
        return copy.copy(self)

    def _assign_from(self, other):
        if not isinstance(other, SubGraphView):
            raise NpuArgumentTypeError(f"other must be a SubGraphView, got {type(other).__name__}")
        self._graph = other._graph
        self._ops = list(other._ops)
        self._passthrough_ts = list(other._passthrough_ts)
        self._input_ts = list(other._input_ts)
        self._output_ts = list(other._output_ts)

    def _remap_default(self, remove_input_map=True, remove_output_map=True):
        if not (remove_input_map or remove_output_map):
            return
        inputs, outputs, _ = select.compute_boundary_ts(self._ops)
        if remove_input_map:
            self._input_ts = list(inputs) + self._passthrough_ts
        if remove_output_map:
            self._output_ts = list(outputs) + self._passthrough_ts

    def remap_default(self, remove_input_map=True, remove_output_map=True):
        """A copy whose inputs and/or outputs are back in their computed order."""
        result = self.copy()
        result._remap_default(remove_input_map, remove_output_map)
        return result

    def _remap_inputs(self, new_input_indices):
        indices = _indices(new_input_indices, self._input_ts, "new_input_indices")
        _check_range(indices, len(self._input_ts), False, "new_input_indices")
        self._input_ts = [self._input_ts[index] for index in indices]

    def _remap_outputs(self, new_output_indices):
        indices = _indices(new_output_indices, self._output_ts, "new_output_indices")
        _check_range(indices, len(self._output_ts), True, "new_output_indices")
        self._output_ts = [self._output_ts[index] for index in indices]

    def _remap_outputs_make_unique(self):
        self._output_ts = util.concatenate_unique([], self._output_ts)

    def _remap_outputs_to_consumers(self):
        self._remap_outputs_make_unique()
        self._output_ts = [tensor for tensor in self._output_ts for _ in tensor.consumers()]

    def remap_outputs_make_unique(self):
        """A copy whose outputs are without repeats."""
        result = self.copy()
        result._remap_outputs_make_unique()
        return result

    def remap_outputs_to_consumers(self):
        """A copy whose outputs are repeated once per consumer (for rerouting to each consumer)."""
        result = self.copy()
        result._remap_outputs_to_consumers()
        return result

    def _remove_unused_ops(self, control_inputs=True):
        used = select.get_walks_union_ops(
            self.connected_inputs, self.connected_outputs, within_ops=self._ops, control_inputs=control_inputs
        )
        self._ops = [op for op in self._ops if op in used]

    def remove_unused_ops(self, control_inputs=True):
        """A copy without the ops that neither follow its inputs nor lead to its outputs."""
        result = self.copy()
        result._remove_unused_ops(control_inputs)
        return result

    def remap_inputs(self, new_input_indices):
        """A copy whose inputs are ``[inputs[i] for i in new_input_indices]`` (indices or tensors, no repeats).

        Raises:
          ValueError: an index out of range, a repeat, or a tensor that is not an input.
        """
        result = self.copy()
        result._remap_inputs(new_input_indices)
        return result

    def remap_outputs(self, new_output_indices):
        """A copy whose outputs are ``[outputs[i] for i in new_output_indices]`` (indices or tensors; repeats
        allowed).

        Raises:
          ValueError: an index out of range, or a tensor that is not an output.
        """
        result = self.copy()
        result._remap_outputs(new_output_indices)
        return result

    def remap(self, new_input_indices=None, new_output_indices=None):
        """``remap_inputs`` and ``remap_outputs`` at once (None leaves that side)."""
        result = self.copy()
        if new_input_indices is not None:
            result._remap_inputs(new_input_indices)
        if new_output_indices is not None:
            result._remap_outputs(new_output_indices)
        return result

    def find_op_by_name(self, op_name):
        """The view's op named ``op_name``.

        Raises:
          ValueError: no op of the view has that name.
        """
        found = [op for op in self._ops if op.name == op_name]
        if not found:
            raise NpuArgumentError(f"op_name {op_name!r} is not the name of an op of this SubGraphView")
        if len(found) > 1:
            raise AssertionError(f"more than one op named {op_name!r}")
        return found[0]

    def __str__(self):
        if not self:
            return "SubGraphView: empty"
        out = io.StringIO()
        print(f"SubGraphView (graphid={id(self._graph)}):", file=out)
        for title, items, name in (
            ("ops", self._ops, lambda op: op.name),
            ("inputs", self._input_ts, self._tensor_label),
            ("outputs", self._output_ts, self._tensor_label),
        ):
            if items:
                print(f"** {title}[{len(items)}]:", file=out)
                print("\n".join(f"  {name(item)}" for item in items), file=out)
            else:
                print(f"** {title}: empty", file=out)
        return out.getvalue()

    def _tensor_label(self, tensor):
        return f"{tensor.name} *" if tensor in self._passthrough_ts else tensor.name

    @property
    def graph(self):
        """The graph of the view (None for an empty view)."""
        return self._graph

    @property
    def ops(self):
        """The view's ops (a list)."""
        return self._ops

    @property
    def inputs(self):
        """The input tensors, passthroughs last (read-only)."""
        return util.ListView(self._input_ts)

    @property
    def connected_inputs(self):
        """The inputs that are not passthroughs."""
        return [tensor for tensor in self._input_ts if tensor not in self._passthrough_ts]

    @property
    def outputs(self):
        """The output tensors, passthroughs last (read-only)."""
        return util.ListView(self._output_ts)

    @property
    def connected_outputs(self):
        """The outputs that are not passthroughs."""
        return [tensor for tensor in self._output_ts if tensor not in self._passthrough_ts]

    @property
    def passthroughs(self):
        """The passthrough tensors (read-only)."""
        return util.ListView(self._passthrough_ts)

    def __bool__(self):
        return self._graph is not None

    def op(self, op_id):
        """The op at position ``op_id`` of ``ops``."""
        return self._ops[op_id]

    def is_passthrough(self, t):
        """Whether ``t`` is one of the passthrough tensors."""
        return t in self._passthrough_ts

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None

    def input_index(self, t):
        """The position of ``t`` in ``inputs``.

        Raises:
          ValueError: ``t`` is not an input.
        """
        if t not in self._input_ts:
            raise NpuArgumentError(f"{getattr(t, 'name', t)} is not an input of this SubGraphView")
        return self._input_ts.index(t)

    def output_index(self, t):
        """The position of ``t`` in ``outputs``.

        Raises:
          ValueError: ``t`` is not an output.
        """
        if t not in self._output_ts:
            raise NpuArgumentError(f"{getattr(t, 'name', t)} is not an output of this SubGraphView")
        return self._output_ts.index(t)

    def consumers(self):
        """The ops outside the view reading its outputs, without repeats."""
        members = frozenset(self._ops)
        found = []
        for tensor in self._output_ts:
            util.concatenate_unique(found, [op for op in tensor.consumers() if op not in members])
        return found


def _check_graph(view, graph):
    if graph is None or not view.graph:
        return view
    if not isinstance(graph, tf.Graph):
        raise NpuArgumentTypeError(f"graph must be a tf.Graph, got {type(graph).__name__}")
    if view.graph is not graph:
        raise NpuArgumentError("the SubGraphView's ops belong to another graph than the graph argument")
    return view


def make_view(*args, **kwargs):
    """A ``SubGraphView`` (``ge.sgv``): a view given alone is returned as it is; otherwise its ops are
    ``select_ops(*args, **kwargs)`` and its passthroughs ``select_ts(*args, ...)`` with ``(?#ts)`` regular
    expressions only.

    Args:
      *args: views, ops, tensors, graphs, regular expressions (these need ``graph=``).
      **kwargs: those of ``select_ops`` (``graph``, ``positive_filter``, ...).
    Raises:
      TypeError / ValueError: as ``select_ops``; the view is of another graph than ``graph``.
    """
    graph = kwargs.get("graph")
    if len(args) == 1 and isinstance(args[0], SubGraphView):
        return _check_graph(args[0], graph)
    ops, ts = select.select_ops_and_ts(*args, **kwargs)
    return _check_graph(SubGraphView(ops, ts), graph)


def make_view_from_scope(scope, graph):
    """A ``SubGraphView`` of the ops of ``graph`` in the name scope ``scope`` (``ge.sgv_scope``)."""
    return SubGraphView(select.get_name_scope_ops(graph, scope))
