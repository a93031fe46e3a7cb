"""Copying subgraphs for ``tf.contrib.graph_editor``: ``Transformer`` (a configurable copier), ``copy``,
``copy_with_input_replacements`` and ``graph_replace``, with the handlers TensorFlow 1.15 offered to configure it.

A copy is made op by op in creation order: each op's ``NodeDef`` is copied (its name moved from the source scope to
the destination scope, made unique) and built into the destination graph as a new ``tf.Operation`` reading the
copied (or replaced, or kept) inputs; control inputs are connected once every op exists. While loops, whose ops
read tensors created after them, get temporary inputs that are rewired at the end.
"""

import copy as copy_lib
import functools
import io

import tensorflow as tf

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.graph_editor import reroute, select, subgraph, util

__all__ = [
    "replace_t_with_placeholder_handler",
    "keep_t_if_possible_handler",
    "assign_renamed_collections_handler",
    "transform_op_if_inside_handler",
    "copy_op_handler",
    "Transformer",
    "TransformerInfo",
    "copy",
    "copy_with_input_replacements",
    "graph_replace",
]


def replace_t_with_placeholder_handler(info, t):
    """External-input handler: a new placeholder in the destination graph stands for ``t``."""
    with info.graph_.as_default():
        return util.make_placeholder_from_tensor(t, scope=info.scope_)


def keep_t_if_possible_handler(info, t):
    """External-input handler: ``t`` itself when copying within its graph, otherwise a placeholder."""
    return t if info.graph is info.graph_ else replace_t_with_placeholder_handler(info, t)


def assign_renamed_collections_handler(info, elem, elem_):
    """Collections handler: ``elem_`` joins every collection ``elem`` is in (TensorFlow's own collections under
    their name, the others renamed into the destination scope)."""
    predefined = util.get_predefined_collection_names()
    for name, members in info.collections.items():
        if elem in members:
            info.graph_.add_to_collection(name if name in predefined else info.new_name(name), elem_)


def transform_op_if_inside_handler(info, op, keep_if_possible=True):
    """Control-input / original-op handler: the copy of ``op`` if it is in the copied view, else ``op`` itself
    when copying within its graph (and ``keep_if_possible``), else None (dropped)."""
    if op in info.sgv.ops:
        return info.transformed_ops[op]
    return op if keep_if_possible and info.graph is info.graph_ else None


def copy_op_handler(info, op, new_inputs, copy_shape=False, nodedef_fn=None):
    """Op handler: a copy of ``op`` in the destination graph reading ``new_inputs``.

    Args:
      info: the transform's state (``info.new_name``, ``info.graph_``).
      op: the op to copy.
      new_inputs: its inputs in the copy (a list of tensors).
      copy_shape: also set the copy's output shapes to ``op``'s.
      nodedef_fn: if given, a function editing the copied ``NodeDef`` before the op is built.
    Returns:
      ``(new_op, new_op.outputs)``.
    Raises:
      TypeError: ``new_inputs`` is a bool (an older signature's argument), not a list of inputs.
    """
    if isinstance(new_inputs, bool):
        raise NpuArgumentTypeError("copy_op_handler: new_inputs must be an iterable of tensors, got a bool")
    node_def = copy_lib.deepcopy(op.node_def)
    node_def.name = info.graph_.unique_name(info.new_name(op.name))
    if nodedef_fn is not None:
        node_def = nodedef_fn(node_def)
    new_op = tf.Operation.from_node_def(
        node_def,
        info.graph_,
        inputs=list(new_inputs),
        output_types=list(op._output_types),
        control_inputs=[],
        input_types=list(op._input_types),
        original_op=None,
        op_def=copy_lib.deepcopy(op.op_def),
    )
    if copy_shape:
        for tensor, new_tensor in zip(op.outputs, new_op.outputs):
            new_tensor.set_shape(tensor.get_shape())
    if op._original_op is not None:
        new_op._original_op = op._original_op  # the copy of it, if any, is set once every op exists
    return new_op, new_op.outputs


class TransformerInfo:
    """What a transform did: which op / tensor became which (``transformed``, ``original``).

    ``_transformed_ops`` / ``_transformed_ts`` ({original: copy}) are read by scripts of TensorFlow 1.15's time
    (OpenAI's gradient checkpointing), so they keep these names.
    """

    def __init__(self, info):
        self._graph = info.graph
        self._scope = info.scope
        self._graph_ = info.graph_
        self._scope_ = info.scope_
        self._transformed_ops = info.transformed_ops
        self._transformed_ts = info.transformed_ts

    def _table(self, top):
        if isinstance(top, tf.Operation):
            return self._transformed_ops
        if isinstance(top, tf.Tensor):
            return self._transformed_ts
        raise NpuArgumentTypeError(f"expected a tf.Tensor or a tf.Operation, got {type(top).__name__}")

    def _transformed_elem(self, original_top, missing_fn=None):
        table = self._table(original_top)
        if original_top in table:
            return table[original_top]
        return None if missing_fn is None else missing_fn(original_top)

    def _original_elem(self, transformed_top, missing_fn=None):
        for original, transformed in self._table(transformed_top).items():
            if transformed is transformed_top:
                return original
        return None if missing_fn is None else missing_fn(transformed_top)

    def transformed(self, original, missing_fn=None):
        """The copies of ``original`` (an op, a tensor or a nest of them); None (or ``missing_fn(x)``) for what was
        not copied."""
        return util.transform_tree(original, functools.partial(self._transformed_elem, missing_fn=missing_fn))

    def original(self, transformed, missing_fn=None):
        """The originals of ``transformed`` (an op, a tensor or a nest of them); None (or ``missing_fn(x)``) for
        what is not a copy."""
        return util.transform_tree(transformed, functools.partial(self._original_elem, missing_fn=missing_fn))

    def __str__(self):
        out = io.StringIO()
        print("Transform result info:", file=out)
        if self._graph is self._graph_:
            print(f"  Within graph[{id(self._graph)}]{'' if self._scope_ else ' IN-PLACE'}", file=out)
        else:
            print(f"  graph[{id(self._graph)}] => graph[{id(self._graph_)}]", file=out)
        if self._scope:
            print(f"  Relative to source scope: {self._scope}", file=out)
        if self._scope_:
            print(f"  Scope destination: {self._scope_}", file=out)
        print("Operations mapping:", file=out)
        for op, new_op in self._transformed_ops.items():
            print(f"  {op.name} => {new_op.name}", file=out)
        return out.getvalue()


class _TransformState:
    """The state of one ``Transformer`` call; handlers receive it as ``info``."""

    def __init__(self, sgv, dst_graph, dst_scope, src_scope):
        self.sgv = sgv
        self.sgv_inputs_set = frozenset(sgv.inputs)
        self.ops = frozenset(sgv.ops)
        self.control_outputs = util.ControlOutputs(sgv.graph)
        self.graph = sgv.graph
        self.scope = src_scope
        self.graph_ = dst_graph
        self.scope_ = dst_scope
        self.transformed_ops = {}
        self.transformed_ts = {}
        self.collections = {key: self.graph.get_collection(key) for key in self.graph.get_all_collection_keys()}
        self.cyclic_ops = []
        self.transform_original_op_handler = transform_op_if_inside_handler
        self.tmp_cyclic_ts = []  # (tensor, its temporary stand-in, the op reading it), rewired at the end

    def new_name(self, name):
        """``name`` moved from the source scope to the destination scope.

        Raises:
          ValueError: ``name`` is not in the source scope.
        """
        if not name.startswith(self.scope):
            raise NpuArgumentError(f"{name} is not in the source scope src_scope={self.scope!r}")
        return self.scope_ + name[len(self.scope) :]


class Transformer:
    """A subgraph copier whose steps are handlers one may replace (attributes): ``transform_op_handler``
    (``copy_op_handler``), ``transform_control_input_handler`` and ``transform_original_op_handler``
    (``transform_op_if_inside_handler``), ``assign_collections_handler`` (``assign_renamed_collections_handler``),
    ``transform_external_input_handler`` (``replace_t_with_placeholder_handler``, for the view's inputs) and
    ``transform_external_hidden_input_handler`` (``keep_t_if_possible_handler``, for inputs read from outside that
    are not among the view's inputs)."""

    def __init__(self):
        self.transform_op_handler = copy_op_handler
        self.transform_control_input_handler = transform_op_if_inside_handler
        self.assign_collections_handler = assign_renamed_collections_handler
        self.transform_external_input_handler = replace_t_with_placeholder_handler
        self.transform_external_hidden_input_handler = keep_t_if_possible_handler
        self.transform_original_op_handler = transform_op_if_inside_handler

    def __call__(self, sgv, dst_graph, dst_scope, src_scope="", reuse_dst_scope=False):
        """Copies ``sgv`` into ``dst_graph``.

        Args:
          sgv: what ``make_view`` takes.
          dst_graph: the destination ``tf.Graph``.
          dst_scope: the destination name scope (made unique unless ``reuse_dst_scope``).
          src_scope: the scope of the copied ops' names that ``dst_scope`` replaces.
          reuse_dst_scope: use ``dst_scope`` even if the graph already has it.
        Returns:
          ``(the copy's SubGraphView, TransformerInfo)``.
        Raises:
          TypeError: ``dst_graph`` is not a ``tf.Graph``.
          ValueError: an op's name is not in ``src_scope``; a handler returned the op itself.
        """
        sgv = subgraph.make_view(sgv)
        if not isinstance(dst_graph, tf.Graph):
            raise NpuArgumentTypeError(f"dst_graph must be a tf.Graph, got {type(dst_graph).__name__}")
        src_scope = util.scope_finalize(src_scope)
        dst_scope = util.scope_finalize(dst_scope)
        if dst_scope and not reuse_dst_scope:
            dst_scope = util.scope_finalize(dst_graph.unique_name(dst_scope[:-1]))
        info = _TransformState(sgv, dst_graph, dst_scope, src_scope)
        self._copy_ops(info)
        self._finalize_cycles(info)
        self._connect_control_inputs(info)
        return self._transform_sgv(info, sgv), TransformerInfo(info)

    def _copy_ops(self, info):
        for op in sorted(info.sgv.ops, key=lambda op: op._id):
            new_inputs = [self._transformed_t(info, tensor, op) for tensor in op.inputs]
            new_op, new_outputs = self.transform_op_handler(info, op, new_inputs)
            if new_op is op:
                raise NpuArgumentError(
                    f"transform_op_handler returned {op.name} itself: in-place transformation is not allowed"
                )
            info.transformed_ops[op] = new_op
            self.assign_collections_handler(info, op, new_op)
            for tensor, new_tensor in zip(op.outputs, new_outputs):
                info.transformed_ts[tensor] = new_tensor
                self.assign_collections_handler(info, tensor, new_tensor)

    def _finalize_cycles(self, info):
        for tensor, stand_in, consumer in info.tmp_cyclic_ts:
            if tensor not in info.transformed_ts or consumer not in info.transformed_ops:
                raise NpuArgumentError(f"the loop tensor {tensor.name} read by {consumer.name} was not copied")
            new_consumer = info.transformed_ops[consumer]
            index = next(i for i, t in enumerate(new_consumer.inputs) if t is stand_in)
            new_consumer._update_input(index, info.transformed_ts[tensor])

    def _connect_control_inputs(self, info):
        for op in info.sgv.ops:
            new_op = info.transformed_ops[op]
            if op._original_op is not None:
                original = self.transform_original_op_handler(info, op._original_op)
                if original is None:
                    log.logger.debug("graph_editor: no original op for %s", new_op.name)
                else:
                    new_op._original_op = original
            control_inputs = [self.transform_control_input_handler(info, cop) for cop in op.control_inputs]
            reroute.add_control_inputs(new_op, [cop for cop in control_inputs if cop is not None])

    def _transform_sgv(self, info, sgv):
        new_sgv = subgraph.SubGraphView(list(info.transformed_ops.values()))
        input_map = [
            new_sgv.input_index(info.transformed_ts[tensor])
            for tensor in sgv.inputs
            if tensor in info.transformed_ts and info.transformed_ts[tensor] in new_sgv.inputs
        ]
        output_map = [
            new_sgv.output_index(info.transformed_ts[tensor])
            for tensor in sgv.outputs
            if tensor in info.transformed_ts and info.transformed_ts[tensor] in new_sgv.outputs
        ]
        return new_sgv.remap(input_map, output_map)

    def _transformed_t(self, info, t, consumer_op):
        if t in info.transformed_ts:
            return info.transformed_ts[t]
        if t in info.sgv_inputs_set:
            return self.transform_external_input_handler(info, t)
        if t.op not in info.ops:
            return self.transform_external_hidden_input_handler(info, t)
        # an inside tensor not copied yet: its producer comes later in a loop; stand in for it until the end
        if consumer_op.type == "Merge":
            stand_in = self._transformed_t(info, consumer_op.inputs[0], consumer_op)
        elif t.op.type == "Enter":
            stand_in = self._transformed_t(info, t.op.inputs[0], consumer_op)
        else:
            with info.graph_.as_default():
                stand_in = util.make_placeholder_from_tensor(t, scope=info.scope_, prefix="geph_tmp")
        info.tmp_cyclic_ts.append((t, stand_in, consumer_op))
        return stand_in


def _destination(sgv, dst_graph):
    sgv = subgraph.make_view(sgv)
    dst_graph = sgv.graph if dst_graph is None else dst_graph
    if not isinstance(dst_graph, tf.Graph):
        raise NpuArgumentTypeError(f"dst_graph must be a tf.Graph or None, got {type(dst_graph).__name__}")
    return sgv, dst_graph


def copy(sgv, dst_graph=None, dst_scope="", src_scope="", reuse_dst_scope=False):
    """Copies a subgraph: the copy reads new placeholders in place of the view's inputs, and the same tensors in
    place of the other tensors its ops read from outside (placeholders too when copying to another graph).

    Args:
      sgv: what ``make_view`` takes (a view, ops, ...).
      dst_graph: the destination graph (default: the view's).
      dst_scope: the destination name scope.
      src_scope: the name scope of the copied ops that ``dst_scope`` replaces.
      reuse_dst_scope: use ``dst_scope`` even if the graph has it already.
    Returns:
      ``(the copy's SubGraphView, TransformerInfo)``.
    Raises:
      TypeError: ``dst_graph`` is not a ``tf.Graph``.
    """
    sgv, dst_graph = _destination(sgv, dst_graph)
    return Transformer()(sgv, dst_graph, dst_scope, src_scope, reuse_dst_scope=reuse_dst_scope)


def copy_with_input_replacements(
    sgv, replacement_ts, dst_graph=None, dst_scope="", src_scope="", reuse_dst_scope=False
):
    """``copy`` whose copy reads ``replacement_ts[t]`` for each input ``t`` of the view that is a key of it, and the
    other inputs themselves within the graph (placeholders when copying to another graph).

    Args:
      sgv: what ``make_view`` takes.
      replacement_ts: {input tensor of the view: tensor the copy reads instead}.
      dst_graph, dst_scope, src_scope, reuse_dst_scope: as ``copy``.
    Returns:
      ``(the copy's SubGraphView, TransformerInfo)``.
    Raises:
      TypeError: ``dst_graph`` is not a ``tf.Graph``; ``replacement_ts`` is not a dict.
    """
    sgv, dst_graph = _destination(sgv, dst_graph)
    if not isinstance(replacement_ts, dict):
        raise NpuArgumentTypeError(
            f"replacement_ts must be a dict {{tensor: replacement tensor}}, got {type(replacement_ts).__name__}"
        )
    copier = Transformer()

    def replace_or_keep(info, t):
        return replacement_ts[t] if t in replacement_ts else keep_t_if_possible_handler(info, t)

    copier.transform_external_input_handler = replace_or_keep
    return copier(sgv, dst_graph, dst_scope, src_scope, reuse_dst_scope=reuse_dst_scope)


def _add_while_loop_ops(ops, control_ios):
    """Completes ``ops`` with every op of the while loops some of them are in (a partial loop cannot be copied)."""
    contexts = {op._control_flow_context for op in ops if op._control_flow_context}
    members = set(ops)
    for context in contexts:
        if not context.IsWhileContext():
            continue
        loop_ops = select.get_walks_intersection_ops(
            [enter.op for enter in context.loop_enters],
            [exit_.op for exit_ in context.loop_exits],
            control_ios=control_ios,
        )
        for op in loop_ops:
            if op not in members:
                ops.append(op)
                members.add(op)


def graph_replace(target_ts, replacement_ts, dst_scope="", src_scope="", reuse_dst_scope=False):
    """``target_ts`` recomputed with ``replacement_ts`` substituted: the ops between the replaced tensors and the
    targets are copied, reading the replacements.

    Args:
      target_ts: a tensor or a nest (list, tuple, dict) of tensors.
      replacement_ts: {tensor: its replacement}.
      dst_scope, src_scope, reuse_dst_scope: as ``copy``.
    Returns:
      ``target_ts``' nest with each tensor's copy (the tensor itself where nothing it depends on is replaced).
    Raises:
      ValueError: no target depends on a replaced tensor.
    """
    if not isinstance(replacement_ts, dict):
        raise NpuArgumentTypeError(
            f"replacement_ts must be a dict {{tensor: replacement tensor}}, got {type(replacement_ts).__name__}"
        )
    targets = util.flatten_tree(target_ts)
    graph = util.get_unique_graph(targets, check_types=tf.Tensor, argument="target_ts")
    control_ios = util.ControlOutputs(graph)
    ops = select.get_walks_intersection_ops(list(replacement_ts), targets, control_ios=control_ios)
    if not ops:
        raise NpuArgumentError("target_ts do not depend on any key of replacement_ts: nothing to replace")
    _add_while_loop_ops(ops, control_ios)
    _, info = copy_with_input_replacements(ops, replacement_ts, None, dst_scope, src_scope, reuse_dst_scope)
    return info.transformed(target_ts, lambda original: original)
