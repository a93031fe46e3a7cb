"""Which ops introduce error, rather than only carry what their inputs bring: the rule ``npu-dump compare`` applies.

For every op both trees dumped, with e(t) = the relative Euclidean distance |a - b| / |b| of a tensor t (a = my
run, b = the ground truth; infinite when shapes or inf/NaN positions differ):

  output error  the largest e over the op's outputs;
  input error   the largest e over its inputs: the op's dumped inputs, or, when they were not dumped
                (dump_mode=output), the outputs of the ops that feed it (op_graph.json). When my input has a
                narrower float type than the ground truth's (an fp16 input of a cube op on Ascend, against float32),
                the ground truth is first rounded to my type: lowering an input's precision is the op's own doing.

An op *introduces error* when its output error >= ``FACTOR`` x its input error and >= ``FLOOR``:

  FACTOR = 10     an order of magnitude, as msprobe's "output error much larger than input error" rule;
  FLOOR  = 1e-4   above float32 rounding (about 6e-8 per op), below what one fp16 rounding leaves (about 3e-4).

Ops whose inputs are all unknown are not judged. The rule measures relative error, so an op that cancels
(x - y of close values) can make a small inherited error large and be named too: ``isolate`` reruns an op on
the ground truth's inputs to tell the two apart.
"""

import dataclasses
import math
from typing import Optional

import numpy as np

from npu_bridge.core.dump import dump_file, dump_names, op_graph

FACTOR = 10.0
FLOOR = 1e-4


@dataclasses.dataclass
class OpError:
    """The error of one op's inputs and outputs.

    Attributes:
      name: the op's name (as my dump's header has it).
      key: its sanitized name (the comparison's row key).
      sequence: execution order in my dump.
      input_error, output_error: as in the module docstring (None when unknown).
      introduces: the rule holds.
    """

    name: str
    key: str
    sequence: Optional[int]
    input_error: Optional[float]
    output_error: Optional[float]
    introduces: bool = False

    def describe(self):
        """e.g. "input error 0, output error 0.00031 (ratio inf)"."""
        ratio = _ratio(self.output_error, self.input_error)
        return f"input error {_number(self.input_error)}, output error {_number(self.output_error)}" + (
            "" if ratio is None else f" (ratio {_number(ratio)})"
        )


def find(rows, graph):
    """Judges every op of a comparison.

    Args:
      rows: the comparison's ``Row`` list.
      graph: {op name: op_graph.json entry} of the trees (may be empty).
    Returns:
      ``OpError`` list in execution order.
    """
    by_key = {row.key: row for row in rows if row.comparable}
    graph_by_key = {dump_names.sanitize(name): entry for name, entry in graph.items()}
    ops = {}
    for row in by_key.values():
        if row.key[1] == "output" and row.mine is not None:
            ops.setdefault(row.key[0], row)
    found = []
    for key, row in ops.items():
        outputs = [r for k, r in by_key.items() if k[0] == key and k[1] == "output"]
        inputs = [error for error in _input_errors(key, by_key, graph_by_key.get(key)) if error is not None]
        output_error = max(row_error(r) for r in outputs)
        input_error = max(inputs) if inputs else None
        op = OpError(row.mine.op_name, key, row.sequence, input_error, output_error)
        op.introduces = input_error is not None and output_error >= max(FACTOR * input_error, FLOOR)
        found.append(op)
    return sorted(found, key=lambda op: (op.sequence is None, op.sequence or 0, op.key))


def _input_errors(key, by_key, entry):
    indices = {k[2] for k in by_key if k[0] == key and k[1] == "input"}
    count = max(indices, default=-1) + 1
    if entry is not None:
        count = max(count, len(entry["inputs"]))
    for index in range(count):
        row = by_key.get((key, "input", index))
        if row is None and entry is not None:
            source = op_graph.producer(entry, index)
            row = by_key.get((dump_names.sanitize(source[0]), "output", source[1])) if source else None
        yield None if row is None else row_error(row, lowered=True)


def row_error(row, lowered=False):
    """e of a compared tensor; ``lowered``: the ground truth rounded first to my narrower float type."""
    if row.diverged and row.reason:
        return math.inf  # shapes, inf/NaN positions or numeric-ness differ
    if row.identical:
        return 0.0
    if lowered:
        narrower = _narrower_type(row)
        if narrower is not None:
            return _distance(row, narrower)
    error = row.metrics.get("RelativeEuclideanDistance", 0.0)
    return 0.0 if isinstance(error, float) and math.isnan(error) else error


def _narrower_type(row):
    mine, truth = tensor(row.mine), tensor(row.truth)
    a, b = mine.numpy_dtype(), truth.numpy_dtype()
    if a is None or b is None or a.kind != "f" or b.kind != "f" or a.itemsize >= b.itemsize:
        return None
    return a


def _distance(row, dtype):
    diff = norm = 0.0
    for a, b in zip(tensor(row.mine).value_blocks(), tensor(row.truth).value_blocks()):
        a, b = a.astype(np.float64), b.astype(dtype).astype(np.float64)
        finite_a, finite_b = np.isfinite(a), np.isfinite(b)
        if np.any(finite_a != finite_b):
            return math.inf
        d = a[finite_a] - b[finite_a]
        diff += float(d @ d)
        norm += float(b[finite_a] @ b[finite_a])
    return _ratio(math.sqrt(diff), math.sqrt(norm)) or 0.0


def tensor(side):
    """The ``TensorData`` of a matched tensor (``dump_compare.Side``)."""
    loaded = dump_file.load(side.artifact.path, side.artifact.name)
    return (loaded.inputs if side.io == "input" else loaded.outputs)[side.index]


def _ratio(numerator, denominator):
    if numerator is None or denominator is None:
        return None
    if denominator == 0:
        return 0.0 if numerator == 0 else math.inf
    return numerator / denominator


def _number(value):
    return "?" if value is None else "inf" if math.isinf(value) else f"{value:.3g}"


def summary_lines(errors, describe):
    """The summary's lines naming the ops that introduce error (``describe(op)``: how an op is named)."""
    named = [op for op in errors if op.introduces]
    if not errors:
        return []
    if not named:
        return [f"no op introduces error (output error >= {FACTOR:g} x input error and >= {FLOOR:g})"]
    rule = f"output error >= {FACTOR:g} x input error and >= {FLOOR:g}"
    lines = [f"ops that introduce error ({rule}), in execution order:"]
    lines.extend(f"  #{op.sequence} {describe(op)}: {op.describe()}" for op in named)
    return lines
