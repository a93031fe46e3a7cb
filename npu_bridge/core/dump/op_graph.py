"""What each dumped op is, for rerunning it: {root}/op_graph.json beside op_sources.json.

Ascend's dump files carry an op's name, type and tensors, but not its attributes, nor which ops its inputs come
from. The dump step records both for every op it finds files of (``record``), looked up in the sessions' graphs
as op_sources.json is:

  {"layer1/MatMul": {"type": "MatMul", "inputs": ["x:0", "w1/read:0"], "node_def": "<base64 NodeDef>"}, ...}

``inputs`` are the op's data inputs as "op:output" (control inputs left out); ``node_def`` is the serialized
``NodeDef`` of the user's graph (without its device), left out when it is larger than ``MAX_NODE_DEF_BYTES``
(such an op is not rerun). ``read`` merges the files of a tree (and of the directories above it); ``npu-dump
compare`` uses them to find an op's producers and ``--isolate`` to rerun it (``isolate``).
"""

import base64

from npu_bridge.core.dump import dump_tree
from npu_bridge.core.runtime import bounded_files

GRAPH_FILE = "op_graph.json"
MAX_NODE_DEF_BYTES = 64 * 1024


def record(operation):
    """The op_graph.json entry of a ``tf.Operation``: {"type", "inputs", "node_def" (when small enough)}."""
    inputs = [tensor.name for tensor in operation.inputs]
    entry = {"type": operation.type, "inputs": inputs}
    node_def = operation.node_def
    node_def.ClearField("device")
    data = node_def.SerializeToString()
    if len(data) <= MAX_NODE_DEF_BYTES:
        entry["node_def"] = base64.b64encode(data).decode("ascii")
    return entry


def read(root, above_tree=True):
    """Merges the op_graph.json files of ``root``'s tree and (unless ``above_tree`` is False) of the directories
    above it.

    Returns:
      {op name: entry}; entries that are not of the recorded form are left out (a damaged file costs its ops).
    """
    ops = {}
    above, inside = dump_tree.side_files(root, GRAPH_FILE, above_tree)
    for path in above + inside:
        try:
            parsed = bounded_files.parse_json(bounded_files.read_text(path))
        except (OSError, ValueError):
            continue
        if isinstance(parsed, dict):
            ops.update({name: entry for name, entry in parsed.items() if _well_formed(entry)})
    return ops


def producer(entry, index):
    """(op name, output index) of the ``index``-th input of a read entry, or None when it is not "op:n"."""
    inputs = entry["inputs"]
    if index >= len(inputs):
        return None
    name, _, output = inputs[index].rpartition(":")
    return (name, int(output)) if name and output.isdigit() else None


def _well_formed(entry):
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("type"), str)
        and isinstance(entry.get("inputs"), list)
        and all(isinstance(name, str) for name in entry["inputs"])
        and isinstance(entry.get("node_def", ""), str)
    )
