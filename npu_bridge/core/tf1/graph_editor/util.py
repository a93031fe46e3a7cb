"""Helpers of ``tf.contrib.graph_editor``: lists of ops and tensors of one graph, control outputs, placeholders
standing for tensors, scope names, trees of ops and tensors."""

import re

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, shortened

__all__ = [
    "make_list_of_op",
    "get_tensors",
    "make_list_of_t",
    "get_generating_ops",
    "get_consuming_ops",
    "ControlOutputs",
    "placeholder_name",
    "make_placeholder_from_tensor",
    "make_placeholder_from_dtype_and_shape",
]

PLACEHOLDER_PREFIX = "geph"  # "graph editor placeholder", the names TensorFlow 1.15 gave them


def concatenate_unique(first, second):
    """Appends to the list ``first`` the elements of ``second`` it does not hold yet, in order; returns ``first``."""
    seen = set(first)
    for element in second:
        if element not in seen:
            first.append(element)
            seen.add(element)
    return first


class ListView:
    """A read-only view of a list (``SubGraphView.inputs``, ``outputs``, ``passthroughs``).

    Args:
      items: the list it shows.
    Raises:
      TypeError: ``items`` is not a list.
    """

    def __init__(self, items):
        if not isinstance(items, list):
            raise NpuArgumentTypeError(f"ListView: items must be a list, got {type(items).__name__}")
        self._list = items

    def __iter__(self):
        return iter(self._list)

    def __len__(self):
        return len(self._list)

    def __bool__(self):
        return bool(self._list)

    def __getitem__(self, index):
        return self._list[index]

    def __add__(self, other):
        return list(self._list) + list(other)

    def __repr__(self):
        return f"ListView({self._list!r})"


def is_iterable(obj):
    """True for anything ``iter`` accepts, except a ``tf.Tensor`` (one tensor is one element)."""
    if isinstance(obj, tf.Tensor):
        return False
    try:
        iter(obj)
    except Exception:  # noqa: BLE001 - whatever iter raises means "not iterable"
        return False
    return True


def flatten_tree(tree, leaves=None):
    """The leaves of a nest of dicts (their values) and iterables, depth first; appended to ``leaves`` if given."""
    leaves = [] if leaves is None else leaves
    if isinstance(tree, dict):
        for child in tree.values():
            flatten_tree(child, leaves)
    elif is_iterable(tree):
        for child in tree:
            flatten_tree(child, leaves)
    else:
        leaves.append(tree)
    return leaves


def transform_tree(tree, fn, iterable_type=tuple):
    """The same nest with ``fn`` applied to every leaf: dicts, (named) tuples and sequences keep their type, other
    iterables become ``iterable_type``."""
    if not is_iterable(tree):
        return fn(tree)
    if isinstance(tree, dict):
        return type(tree)((key, transform_tree(child, fn, iterable_type)) for key, child in tree.items())
    children = [transform_tree(child, fn, iterable_type) for child in tree]
    if isinstance(tree, tuple):
        return type(tree)(*children) if hasattr(tree, "_fields") else type(tree)(children)
    if isinstance(tree, (list, ListView)):
        return type(tree)(children)
    return iterable_type(children)


def check_graphs(*views):
    """Raises ``ValueError`` unless every argument with a graph (``.graph`` not None) has the same one."""
    graph = None
    for index, view in enumerate(views):
        if view.graph is None:
            continue
        if graph is None:
            graph = view.graph
        elif view.graph is not graph:
            raise NpuArgumentError(f"argument {index} belongs to another graph than the arguments before it")


def get_unique_graph(tops, check_types=None, none_if_empty=False, argument="tops"):
    """The one graph of ``tops`` (ops and/or tensors), or ``tops`` itself if it is a ``tf.Graph``.

    Args:
      tops: a graph or an iterable of ops / tensors.
      check_types: the types allowed for its elements (default: ``tf.Operation`` and ``tf.Tensor``).
      none_if_empty: return None for an empty iterable instead of raising.
      argument: the argument's name for error messages.
    Raises:
      TypeError: ``tops`` is not iterable, or holds an element of another type.
      ValueError: its elements belong to several graphs, or it is empty (unless ``none_if_empty``).
    """
    if isinstance(tops, tf.Graph):
        return tops
    if not is_iterable(tops):
        raise NpuArgumentTypeError(
            f"{argument} must be a tf.Graph or an iterable of tf.Operation / tf.Tensor, got {type(tops).__name__}"
        )
    if check_types is None:
        check_types = (tf.Operation, tf.Tensor)
    elif not is_iterable(check_types):
        check_types = (check_types,)
    check_types = tuple(check_types)
    graph = None
    for top in tops:
        if not isinstance(top, check_types):
            allowed = " or ".join(f"tf.{kind.__name__}" for kind in check_types)
            raise NpuArgumentTypeError(f"{argument} holds {shortened(top)} ({type(top).__name__}); allowed: {allowed}")
        if graph is None:
            graph = top.graph
        elif top.graph is not graph:
            raise NpuArgumentError(f"{argument}: {top.name} belongs to another graph than {argument}'s first element")
    if graph is None and not none_if_empty:
        raise NpuArgumentError(f"{argument} is empty: its graph is unknown")
    return graph


def _make_list(tops, kind, check_graph, allow_graph, ignore_other, argument, of_graph):
    if isinstance(tops, tf.Graph):
        if not allow_graph:
            raise NpuArgumentTypeError(f"{argument} is a tf.Graph, which is not allowed here (allow_graph=False)")
        return of_graph(tops)
    if not is_iterable(tops):
        tops = [tops]
    tops = list(tops)
    if not tops:
        return []
    if check_graph:
        get_unique_graph(tops, check_types=None if ignore_other else kind, argument=argument)
    return [top for top in tops if isinstance(top, kind)]


def make_list_of_op(ops_, check_graph=True, allow_graph=True, ignore_ts=False, argument="ops"):
    """A list of ``tf.Operation`` from one op, an iterable of ops or a graph (all its ops).

    Args:
      ops_: the op(s) or graph.
      check_graph: check that they are ops of one graph.
      allow_graph: accept a ``tf.Graph``.
      ignore_ts: leave tensors out silently instead of raising.
      argument: the argument's name for error messages.
    Raises:
      TypeError: an element is not an op (or a tensor, with ``ignore_ts``); a graph with ``allow_graph=False``.
      ValueError: the ops belong to several graphs.
    """
    return _make_list(ops_, tf.Operation, check_graph, allow_graph, ignore_ts, argument, tf.Graph.get_operations)


def get_tensors(graph):
    """Every output tensor of every op of ``graph``, in op creation order.

    Raises:
      TypeError: ``graph`` is not a ``tf.Graph``.
    """
    if not isinstance(graph, tf.Graph):
        raise NpuArgumentTypeError(f"graph must be a tf.Graph, got {type(graph).__name__}")
    return [tensor for op in graph.get_operations() for tensor in op.outputs]


def make_list_of_t(ts, check_graph=True, allow_graph=True, ignore_ops=False, argument="ts"):
    """A list of ``tf.Tensor`` from one tensor, an iterable of tensors or a graph (all its tensors).

    Args:
      ts: the tensor(s) or graph.
      check_graph: check that they are tensors of one graph.
      allow_graph: accept a ``tf.Graph``.
      ignore_ops: leave ops out silently instead of raising.
      argument: the argument's name for error messages.
    Raises:
      TypeError: an element is not a tensor (or an op, with ``ignore_ops``); a graph with ``allow_graph=False``.
      ValueError: the tensors belong to several graphs.
    """
    return _make_list(ts, tf.Tensor, check_graph, allow_graph, ignore_ops, argument, get_tensors)


def get_generating_ops(ts):
    """The op producing each tensor of ``ts`` (one per tensor)."""
    return [tensor.op for tensor in make_list_of_t(ts, allow_graph=False)]


def get_consuming_ops(ts):
    """The ops reading any tensor of ``ts``, without repeats, in order."""
    found = []
    for tensor in make_list_of_t(ts, allow_graph=False):
        concatenate_unique(found, tensor.consumers())
    return found


class ControlOutputs:
    """The control outputs of every op of a graph (the ops that have it as a control input), which TensorFlow does
    not store; ``update()`` recomputes them after the graph grew.

    Args:
      graph: a ``tf.Graph``.
    Raises:
      TypeError: ``graph`` is not a ``tf.Graph``.
    """

    def __init__(self, graph):
        if not isinstance(graph, tf.Graph):
            raise NpuArgumentTypeError(f"ControlOutputs: graph must be a tf.Graph, got {type(graph).__name__}")
        self._graph = graph
        self._control_outputs = {}
        self._version = None
        self._build()

    def update(self):
        """Recomputes the table if ops were added since it was built; returns self."""
        if self._version != self._graph.version:
            self._build()
        return self

    def _build(self):
        table = {}
        for op in self._graph.get_operations():
            for control_input in op.control_inputs:
                users = table.setdefault(control_input, [])
                if op not in users:
                    users.append(op)
        self._control_outputs = table
        self._version = self._graph.version

    def get_all(self):
        """{op: [ops having it as a control input]}."""
        return self._control_outputs

    def get(self, op):
        """The ops having ``op`` as a control input (an empty tuple if none)."""
        return self._control_outputs.get(op, ())

    @property
    def graph(self):
        return self._graph


def scope_finalize(scope):
    """``scope`` ending with "/" (unless empty)."""
    return scope + "/" if scope and not scope.endswith("/") else scope


def scope_dirname(scope):
    """``"a/b/c"`` -> ``"a/b/"``; ``""`` without a "/"."""
    return scope[: scope.rfind("/") + 1]


def scope_basename(scope):
    """``"a/b/c"`` -> ``"c"``."""
    return scope[scope.rfind("/") + 1 :]


def placeholder_name(t=None, scope=None, prefix=PLACEHOLDER_PREFIX):
    """The name of a placeholder standing for ``t`` (``<scope>geph__<op basename>_<output index>``, the scope being
    ``t``'s op's unless given) or, without ``t``, ``<scope>geph``.

    Raises:
      TypeError: ``t`` is not a ``tf.Tensor``.
    """
    if scope is not None:
        scope = scope_finalize(scope)
    if t is None:
        return f"{scope or ''}{prefix}"
    if not isinstance(t, tf.Tensor):
        raise NpuArgumentTypeError(f"placeholder_name: t must be a tf.Tensor, got {type(t).__name__}")
    basename = scope_basename(t.op.name)
    if scope is None:
        scope = scope_dirname(t.op.name)
    if basename.startswith(f"{prefix}__"):
        return scope + basename
    return f"{scope}{prefix}__{basename}_{t.value_index}"


def make_placeholder_from_tensor(t, scope=None, prefix=PLACEHOLDER_PREFIX):
    """A placeholder of ``t``'s dtype and shape in the default graph, named by ``placeholder_name``."""
    return tf.compat.v1.placeholder(dtype=t.dtype, shape=t.get_shape(), name=placeholder_name(t, scope, prefix))


def make_placeholder_from_dtype_and_shape(dtype, shape=None, scope=None, prefix=PLACEHOLDER_PREFIX):
    """A placeholder of ``dtype`` and ``shape`` in the default graph, named ``<scope>geph`` (made unique)."""
    return tf.compat.v1.placeholder(dtype=dtype, shape=shape, name=placeholder_name(scope=scope, prefix=prefix))


def get_predefined_collection_names():
    """The values of ``tf.GraphKeys``' constants (collection names TensorFlow itself uses). The deprecated
    ``VARIABLES`` (a property warning when read) is ``GLOBAL_VARIABLES``' value, so it is not read."""
    return [
        value
        for name, value in vars(tf.compat.v1.GraphKeys).items()
        if isinstance(value, str) and not re.match(r"^__\w+__$", name)
    ]


def find_corresponding_elem(target, dst_graph, dst_scope="", src_scope=""):
    """The op or tensor of ``dst_graph`` named as ``target``, with ``src_scope`` replaced by ``dst_scope``.

    Raises:
      TypeError: ``target`` is neither a ``tf.Operation`` nor a ``tf.Tensor``.
      ValueError: its name does not start with ``src_scope``.
    """
    if not isinstance(target, (tf.Operation, tf.Tensor)):
        raise NpuArgumentTypeError(f"target must be a tf.Operation or a tf.Tensor, got {type(target).__name__}")
    name = target.name
    if src_scope:
        src_scope = scope_finalize(src_scope)
        if not name.startswith(src_scope):
            raise NpuArgumentError(f"target {name} is not in src_scope {src_scope!r}")
        name = name[len(src_scope) :]
    name = scope_finalize(dst_scope) + name if dst_scope else name
    if isinstance(target, tf.Tensor):
        return dst_graph.get_tensor_by_name(name)
    return dst_graph.get_operation_by_name(name)


def find_corresponding(targets, dst_graph, dst_scope="", src_scope=""):
    """``find_corresponding_elem`` on every leaf of the nest ``targets``."""
    return transform_tree(targets, lambda top: find_corresponding_elem(top, dst_graph, dst_scope, src_scope))
