"""Where dumped and overflowing ops were created in the user's code, for op_sources.json and the overflow report.

The run hooks of dumping sessions note their graphs (``note_graph``); an op is looked up in them by name
(``creation_site``), or by the sanitized name its dump files carry (``site_of_file_name``).
"""

import os
import weakref

from npu_bridge.core.dump import dump_names

_LIBRARY_PATHS = tuple(os.sep + part + os.sep for part in ("tensorflow", "tf_keras", "keras", "npu_bridge"))
_graphs = weakref.WeakSet()  # graphs of hooked sessions
_file_names = weakref.WeakKeyDictionary()  # graph -> (its version when indexed, {sanitized name: op name})


_noted = [0]  # graphs noted so far: names not found before may be found once it moves


def note_graph(graph):
    """Remembers ``graph`` (as long as it lives) as one in which dumped and overflowing ops are looked up."""
    if graph not in _graphs:
        _graphs.add(graph)
        _noted[0] += 1


def graphs_noted():
    """How many graphs were noted so far (a lookup that failed may succeed once this moves)."""
    return _noted[0]


def creation_site(op_name):
    """Where ``op_name`` was created in the user's code ("file:line in function"), or None when unknown."""
    for graph in list(_graphs):
        try:
            op = graph.get_operation_by_name(op_name)
        except (KeyError, ValueError):
            continue
        for frame in reversed(op.traceback):
            if not any(part in frame.filename for part in _LIBRARY_PATHS) and not frame.filename.startswith("<"):
                return f"{frame.filename}:{frame.lineno} in {frame.name}"
    return None


def site_of_file_name(file_op_name):
    """Finds the op whose dump files carry ``file_op_name`` (its name with '.', '/', '\\', ' ' as '_').

    Returns:
      (op name, creation site or None), or None when no noted graph has such an op. Each graph is indexed once,
      and again only when it has grown since.
    """
    for graph in list(_graphs):
        version = graph.version  # grows as ops are added
        indexed = _file_names.get(graph)
        if indexed is None or (indexed[0] != version and file_op_name not in indexed[1]):
            names = {}
            for op in graph.get_operations():
                names.setdefault(dump_names.sanitize(op.name), op.name)
            indexed = _file_names[graph] = (version, names)
        op_name = indexed[1].get(file_op_name)
        if op_name is not None:
            return op_name, creation_site(op_name)
    return None
