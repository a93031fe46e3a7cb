"""Where overflowing ops were created in the user's code, for op_sources.json and the overflow report.

The run hooks of dumping sessions note their graphs (``note_graph``); an op is looked up in them by name.
"""

import os
import weakref

_LIBRARY_PATHS = tuple(os.sep + part + os.sep for part in ("tensorflow", "tf_keras", "keras", "npu_bridge"))
_graphs = weakref.WeakSet()  # graphs of hooked sessions


def note_graph(graph):
    """Remembers ``graph`` (as long as it lives) as one in which overflowing ops are looked up."""
    _graphs.add(graph)


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
