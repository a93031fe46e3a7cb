"""``npu-dump compare --isolate``: rerun an op on the ground truth's own inputs, to measure the error it makes itself.

For each op the comparison names (those that introduce error by ``error_origin``'s rule, and the first diverging
op), the op is rebuilt from the NodeDef the dump step recorded (op_graph.json), fed the ground truth's values of
its inputs (its dumped inputs, else the outputs of the ops that feed it) and run on the CPU twice, in float64
(every float type attribute widened; float32 when the op has no float64 kernel):

  exact    on the ground truth's inputs as they are;
  lowered  on the ground truth's inputs rounded to the types my run gave the op, its outputs rounded to the types
           my run's outputs have: the op as my run computes it, without the error its inputs inherited.

It then reports, as relative Euclidean distances |a - b| / |b| (largest over the outputs):

  own error          lowered vs exact: the error the op introduces by itself;
  my output          my run's output vs exact: the op's own error plus what it inherited;
  ground truth       the ground truth's output vs exact: how far the reference itself is from float64.

An op introduces error when its own error is at least ``error_origin.FLOOR``; otherwise it carries error from its
inputs. A rerun reproduces the precision of the op's inputs and outputs, not of its arithmetic inside (an fp16
kernel accumulating in fp16). Tensors of more than ``MAX_TENSOR_BYTES`` are not loaded; ops without a recorded
NodeDef (dumps of other tools, or ops of tf.function graphs) and random ops are not rerun meaningfully.

A NodeDef comes from a file, and a dump tree may come from someone else: only pure computations are rerun. An op
type TensorFlow does not know, a stateful op (files, printing, variables, random state, checkpoints), an op with no
inputs and an op with a string input or output (file names, file contents) are refused, whatever the file says.
"""

import base64
import dataclasses
import math
from typing import Optional

import numpy as np

from npu_bridge.core.dump import dump_names, error_origin, op_graph
from npu_bridge.core.runtime import inert_text
from npu_bridge.core.runtime.errors import DumpFormatError, RerunError

MAX_TENSOR_BYTES = 64 << 20
_INPUT_NAME = "npu_isolate_input_{}"
_OP_NAME = "npu_isolated_op"


@dataclasses.dataclass
class Isolated:
    """One op rerun on the ground truth's inputs (errors as in the module docstring; None when not rerun)."""

    name: str
    op_type: str
    sequence: Optional[int]
    own_error: Optional[float] = None
    mine_error: Optional[float] = None
    truth_error: Optional[float] = None
    precision: str = ""
    reason: str = ""

    @property
    def introduces(self):
        """Whether the op's own error reaches ``error_origin.FLOOR``."""
        return self.own_error is not None and self.own_error >= error_origin.FLOOR


def ops_to_rerun(comparison):
    """The (sanitized) ops ``--isolate`` reruns: those that introduce error, then the first diverging op."""
    keys = [op.key for op in comparison.origins if op.introduces]
    divergence = comparison.first_divergence
    if divergence is not None and divergence.key[0] not in keys:
        keys.append(divergence.key[0])
    return keys


def rerun(comparison, keys=None):
    """Reruns ops of a ``dump_compare.Comparison`` on the ground truth's inputs.

    Args:
      comparison: the comparison (its ``graph`` comes from the trees' op_graph.json).
      keys: sanitized op names (default: ``ops_to_rerun``).
    Returns:
      ``Isolated`` list, in the order of ``keys``.
    """
    by_key = {row.key: row for row in comparison.rows if row.mine is not None or row.truth is not None}
    graph = {dump_names.sanitize(name): entry for name, entry in comparison.graph.items()}
    results = []
    for key in ops_to_rerun(comparison) if keys is None else keys:
        outputs = sorted((k[2], row) for k, row in by_key.items() if k[0] == key and k[1] == "output")
        side = next((row.mine or row.truth for _, row in outputs), None)
        sequence = outputs[0][1].sequence if outputs else None
        found = Isolated(side.op_name if side else key, side.op_type if side else "?", sequence)
        try:
            _rerun_one(found, graph.get(key), key, by_key, outputs)
        except (RerunError, DumpFormatError) as e:
            found.reason = str(e)
        results.append(found)
    return results


def _rerun_one(found, entry, key, by_key, outputs):
    if entry is None or "node_def" not in entry:
        raise RerunError(f"its type and attributes were not recorded ({op_graph.GRAPH_FILE})")
    inputs, my_types = [], []
    for index in range(len(entry["inputs"])):
        row = by_key.get((key, "input", index))
        if row is None or row.truth is None:
            source = op_graph.producer(entry, index)
            row = by_key.get((dump_names.sanitize(source[0]), "output", source[1])) if source else None
        if row is None or row.truth is None:
            raise RerunError(f"the ground truth has no values of its input {index}")
        inputs.append(_array(row.truth))
        my_types.append(_dtype(row.mine))
    expected = [(index, row) for index, row in outputs if row.truth is not None and row.mine is not None]
    if not expected:
        raise RerunError("no output is in both trees")
    lowered_inputs = [_rounded(array, dtype) for array, dtype in zip(inputs, my_types)]
    try:
        node_def = base64.b64decode(entry["node_def"], validate=True)
    except ValueError:
        raise RerunError(f"its recorded NodeDef is not base64 ({op_graph.GRAPH_FILE})") from None
    node = _parse(node_def)
    _require_pure(node)
    for precision in ("float64", "float32"):
        try:
            exact, lowered = _run(node, inputs, precision), _run(node, lowered_inputs, precision)
            break
        except Exception as e:  # noqa: BLE001 -- TensorFlow raises many kinds for a kernel it lacks
            problem = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    else:
        raise RerunError(f"it cannot be run on the CPU in float64 or float32: {problem}")
    found.precision = precision
    own, mine, truth = [], [], []
    for index, row in expected:
        if index >= len(exact):
            continue
        reference = exact[index]
        own.append(_distance(_rounded(lowered[index], _dtype(row.mine)), reference))
        mine.append(_distance(_array(row.mine), reference))
        truth.append(_distance(_array(row.truth), reference))
    if not own:
        raise RerunError("the rerun gave none of the dumped outputs")
    found.own_error, found.mine_error, found.truth_error = max(own), max(mine), max(truth)


def _array(side):
    data = error_origin.tensor(side)
    if data.nbytes > MAX_TENSOR_BYTES:
        limit = MAX_TENSOR_BYTES
        raise RerunError(f"{side.io} {side.index} has {data.nbytes} bytes; tensors over {limit} are not loaded")
    array = data.logical_array()[0]
    if array is None:
        raise RerunError(f"{side.io} {side.index} has no numeric values")
    return array


def _dtype(side):
    return None if side is None else error_origin.tensor(side).numpy_dtype()


def _rounded(array, dtype):
    if dtype is None or array.dtype.kind != "f" or dtype.kind != "f":
        return array
    with np.errstate(over="ignore"):  # beyond the narrower type's range is inf, as my run computed it
        return array.astype(dtype)


def _distance(mine, reference):
    a, b = np.asarray(mine, np.float64), np.asarray(reference, np.float64)
    if a.shape != b.shape:
        return math.inf
    finite_a, finite_b = np.isfinite(a), np.isfinite(b)
    if np.any(finite_a != finite_b):
        return math.inf
    diff, norm = np.linalg.norm(a[finite_a] - b[finite_a]), np.linalg.norm(b[finite_a])
    return 0.0 if diff == 0 else math.inf if norm == 0 else float(diff / norm)


def _run(op_node, inputs, precision):
    """Runs one op (a parsed NodeDef, left as it is) on ``inputs`` with its float types widened to ``precision``."""
    import tensorflow as tf
    from tensorflow.core.framework import graph_pb2, node_def_pb2, types_pb2

    wide = precision == "float64"
    target, numpy_type = (types_pb2.DT_DOUBLE, np.float64) if wide else (types_pb2.DT_FLOAT, np.float32)
    floats = (types_pb2.DT_HALF, types_pb2.DT_BFLOAT16, types_pb2.DT_FLOAT, types_pb2.DT_DOUBLE)
    node = node_def_pb2.NodeDef()
    node.CopyFrom(op_node)
    for name in [name for name in node.attr if name.startswith("_")]:
        del node.attr[name]  # colocation and the like name ops that are not here
    for attr in node.attr.values():
        if attr.WhichOneof("value") == "type" and attr.type in floats:
            attr.type = target
        elif attr.WhichOneof("value") == "list":
            attr.list.type[:] = [target if t in floats else t for t in attr.list.type]
    graph_def = graph_pb2.GraphDef()
    graph_def.versions.producer = tf.version.GRAPH_DEF_VERSION
    feeds = []
    for index, array in enumerate(inputs):
        array = array.astype(numpy_type) if array.dtype.kind == "f" else array
        placeholder = graph_def.node.add(name=_INPUT_NAME.format(index), op="Placeholder")
        placeholder.attr["dtype"].type = tf.as_dtype(array.dtype).as_datatype_enum
        feeds.append((placeholder.name, array))
    node.name = _OP_NAME
    node.input[:] = [name for name, _ in feeds]
    graph_def.node.append(node)
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=graph) as session:
        outputs = graph.get_operation_by_name(_OP_NAME).outputs
        values = session.run(outputs, {f"{name}:0": array for name, array in feeds})
    return [np.asarray(value) for value in values]


def _parse(node_def):
    """The ``NodeDef`` a serialized NodeDef holds; raises ``RerunError`` when it does not parse."""
    from google.protobuf.message import DecodeError
    from tensorflow.core.framework import node_def_pb2

    try:
        return node_def_pb2.NodeDef.FromString(node_def)
    except DecodeError as e:
        raise RerunError(f"its recorded NodeDef is damaged ({e})") from None


def _require_pure(node):
    """Raises ``RerunError`` unless the ``NodeDef`` is a pure computation (module docstring)."""
    from tensorflow.core.framework import types_pb2
    from tensorflow.python.framework import op_def_registry

    op_def = op_def_registry.get(node.op)
    if op_def is None:
        raise RerunError(f"TensorFlow has no op type {node.op!r}")
    if op_def.is_stateful:
        raise RerunError(f"{node.op} is stateful (files, variables, random state): only pure ops are rerun")
    if not op_def.input_arg:
        raise RerunError(f"{node.op} has no inputs")
    for arg in list(op_def.input_arg) + list(op_def.output_arg):
        declared = node.attr[arg.type_attr].type if arg.type_attr and arg.type_attr in node.attr else arg.type
        if declared == types_pb2.DT_STRING:
            raise RerunError(f"{node.op} takes or gives strings: only numeric ops are rerun")


def render(results):
    """The lines of the "isolated reruns" section."""
    if not results:
        return ["isolated reruns: no op to rerun (none introduces error and none diverges)"]
    lines = [
        "isolated reruns (each op on the ground truth's inputs, on the CPU; own error = the op at my run's types "
        f"vs float64; it introduces error when own error >= {error_origin.FLOOR:g}):"
    ]
    for found in results:
        head = f"  #{found.sequence} {inert_text.value(found.name)} ({inert_text.value(found.op_type)}):"
        if found.reason:
            lines.append(f"{head} not rerun: {inert_text.value(found.reason)}")
            continue
        verdict = "introduces error" if found.introduces else "carries error from its inputs"
        lines.append(
            f"{head} own error {_number(found.own_error)} -> {verdict}; my output vs rerun "
            f"{_number(found.mine_error)}, ground truth vs rerun {_number(found.truth_error)}"
            + ("" if found.precision == "float64" else f" (rerun in {found.precision})")
        )
    return lines


def _number(value):
    return "inf" if math.isinf(value) else f"{value:.3g}"
