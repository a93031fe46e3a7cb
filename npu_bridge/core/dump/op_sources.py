"""Where dumped and overflowing ops were created in the user's code, for op_sources.json and the overflow report.

The run hooks of dumping sessions note their graphs (``note_graph``), and TF2 function graphs are noted when they
are traced (``note_function_graphs``, for ``npu_device``); an op is looked up in them by name (``creation_site``),
or by the sanitized name its dump files carry (``site_of_file_name``).
"""

import functools
import weakref

from npu_bridge.core.dump import dump_names
from npu_bridge.core.runtime import op_sites

_recent = []  # weak references to the graphs of hooked sessions, the one that ran last first
_file_names = weakref.WeakKeyDictionary()  # graph -> (its version when indexed, {sanitized name: op name})


_noted = [0]  # graphs noted so far: names not found before may be found once it moves


def note_graph(graph):
    """Remembers ``graph`` (as long as it lives) as one in which dumped and overflowing ops are looked up; names
    are looked up in the graph that ran last first (another graph of the process may have an op of the same name)."""
    if _recent and _recent[0]() is graph:
        return
    known = any(ref() is graph for ref in _recent)
    _recent[:] = [weakref.ref(graph)] + [ref for ref in _recent if ref() is not None and ref() is not graph]
    if not known:
        _noted[0] += 1


def note_function_graphs():
    """From now on notes every TF2 function graph as it is created (once per process): a ``tf.function``, Keras'
    ``train_function`` and the bodies of their loops and conditions are each traced into a ``FuncGraph``, whose ops
    are the ones dumped when the function runs, under the same names."""
    from tensorflow.python.framework import func_graph

    if _function_graphs_noted:
        return
    _function_graphs_noted.append(True)
    original = func_graph.FuncGraph.__init__

    @functools.wraps(original)
    def noting_init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        note_graph(self)

    func_graph.FuncGraph.__init__ = noting_init


_function_graphs_noted = []


def _graphs():
    return [graph for graph in (ref() for ref in list(_recent)) if graph is not None]


def graphs_noted():
    """How many graphs were noted so far (a lookup that failed may succeed once this moves)."""
    return _noted[0]


def operation(op_name):
    """The ``tf.Operation`` named ``op_name`` in a noted graph, or None when no noted graph has one."""
    for graph in _graphs():
        try:
            return graph.get_operation_by_name(op_name)
        except (KeyError, ValueError):
            continue
    return None


def creation_site(op_name):
    """Where ``op_name`` was created in the user's code ("file:line in function"), or None when unknown."""
    op = operation(op_name)
    return None if op is None else op_sites.creation_site(op)


def site_of_file_name(file_op_name):
    """Finds the op whose dump files carry ``file_op_name`` (its name with '.', '/', '\\', ' ' as '_').

    Returns:
      (op name, creation site or None), or None when no noted graph has such an op. Each graph is indexed once,
      and again only when it has grown since.
    """
    for graph in _graphs():
        version = graph.version  # grows as ops are added
        indexed = _file_names.get(graph)
        if indexed is None or (indexed[0] != version and file_op_name not in indexed[1]):
            names = {}
            for op in graph.get_operations():
                names.setdefault(dump_names.sanitize(op.name), op.name)
            indexed = _file_names[graph] = (version, names)
        op_name = indexed[1].get(file_op_name)
        if op_name is not None:
            return op_name, op_sites.creation_site(graph.get_operation_by_name(op_name))
    return None
