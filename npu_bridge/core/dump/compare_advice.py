"""The advisor line of ``npu-dump compare``: the likely cause of the error at the op a person should look at first.

When the first diverging tensor is an input that no dumped op gave (a feed, the input pipeline), the two runs were
given different data and nothing after it can be compared: the advisor says so (cause "different inputs") and
looks no further.

Otherwise the op is the first that introduces error (``error_origin``) on the way to the first diverging op: the
first in execution order among the diverging op and the ops it depends on (op_graph.json), so that ops whose fp16
rounding leads nowhere are passed over; without such an op (no graph, no divergence) the first that introduces
error, else the first diverging op. Its tensors in the two runs are read and the first of these causes that fits
is named (a = my run, b = the ground truth):

  random op         the op draws random numbers (RandomUniform, RandomShuffle, dropout masks, ...): the two runs drew
                    different ones, unless both were seeded alike
  overflow          a's outputs hold inf/NaN where b's are finite, while a's inputs are finite
  saturation        a's outputs are float16 and reach +-65504 where b's exceed that: Ascend's saturation mode
                    clamped values that float16 cannot hold
  implmode          the op type has two implementations on Ascend that differ numerically (``impl_mode``) and my
                    run did not select high_precision for it
  fp16 accumulation an accumulating op (a cube op, a reduction, a normalization) read or wrote float16 where the
                    ground truth used a wider type: its long sums lose precision
  cast              the op read or wrote a narrower float type than in the ground truth (precision mode, mixed
                    precision lists or a Cast in the graph)
  inherited input   the op's inputs already differ as much as its output (only for the first diverging op, when no
                    op was found to introduce error: the error was made before the dumped ops)

Otherwise no cause is named and ``--isolate`` is suggested. Each cause comes with what to try.
"""

import dataclasses
import math
from typing import Optional

import numpy as np

from npu_bridge.core.dump import dump_names, error_origin, op_graph
from npu_bridge.core.precision import impl_mode, modes

FP16_MAX = 65504.0
ACCUMULATING_OPS = frozenset(
    modes.CUBE_OPS
    + (
        "Sum",
        "Mean",
        "Prod",
        "BiasAddGrad",
        "L2Loss",
        "AvgPool",
        "AvgPoolGrad",
        "AvgPool3D",
        "Cumsum",
        "SegmentSum",
        "UnsortedSegmentSum",
        "FusedBatchNorm",
        "FusedBatchNormV3",
        "FusedBatchNormGradV3",
        "LayerNorm",
        "SoftmaxCrossEntropyWithLogits",
        "SparseSoftmaxCrossEntropyWithLogits",
    )
)
RANDOM_OPS = frozenset(
    (
        "RandomUniform",
        "RandomUniformInt",
        "RandomStandardNormal",
        "TruncatedNormal",
        "ParameterizedTruncatedNormal",
        "RandomShuffle",
        "RandomGamma",
        "RandomPoisson",
        "RandomPoissonV2",
        "Multinomial",
        "RandomCrop",
        "DropOutGenMask",
        "DropOutGenMaskV3",
    )
)
_TRY = {
    "random op": "seed it (tf.random.set_seed / tf.compat.v1.set_random_seed, or the op's seed argument) the same in "
    "both runs, or compare a step whose random values are fed",
    "different inputs": "give both runs the same data: seed the input pipeline (tf.compat.v1.set_random_seed, the "
    "shuffle's seed, numpy's) or feed fixed batches, then dump and compare again",
    "overflow": "scale the loss (NPULossScaleOptimizer) or keep the op in float32 (modify_mixlist: its type in "
    "blacklist)",
    "saturation": "keep the op, or the op feeding it, in float32 (modify_mixlist: blacklist), or scale the loss down",
    "implmode": "select high_precision for it (op_select_implmode=high_precision, optypelist_for_implmode={type})",
    "fp16 accumulation": "keep it in float32 (modify_mixlist: {type} in blacklist, or precision_mode="
    "must_keep_origin_dtype to confirm); npu-debug bisect finds the smallest such set",
    "cast": "keep it in float32 (modify_mixlist: {type} in blacklist, or keep_dtype for this node); npu-debug bisect "
    "finds the smallest such set",
    "inherited input": "dump earlier ops (dump_step, dump_mode=all) or compare the previous step",
}


@dataclasses.dataclass
class Advice:
    """The advisor's finding.

    Attributes:
      name, op_type, sequence: the op looked at (sequence: execution order in my dump).
      key: its sanitized name (the comparison's row key).
      cause: one of the module docstring's causes, or "" when none fits.
      detail: what was seen, in words.
      remedy: what to try.
      introduces: the op was named by the error-origin rule (else it is the first diverging op).
    """

    name: str
    key: str
    op_type: str
    sequence: Optional[int]
    cause: str
    detail: str
    remedy: str
    introduces: bool

    def line(self, describe_op=None):
        """e.g. "advisor: #3 proj/MatMul (MatMul): likely cause fp16 accumulation: ...; try: ..." (``describe_op``
        names the op, inert, with its source line)."""
        who = describe_op(self.name) if describe_op else self.name
        if not self.cause:
            return f"advisor: #{self.sequence} {who} ({self.op_type}): {self.detail}; try: {self.remedy}"
        return (
            f"advisor: #{self.sequence} {who} ({self.op_type}): likely cause {self.cause}: {self.detail}; try: "
            f"{self.remedy}"
        )


def advise(comparison):
    """The ``Advice`` for a ``dump_compare.Comparison``, or None when no op introduces error and none diverges."""
    introducing, divergence = comparison.introducing, comparison.first_divergence
    if divergence is not None and _from_outside(comparison, divergence):
        side = divergence.mine
        cosine = _number(divergence.metrics.get("CosineSimilarity"))
        detail = (
            f"its input {divergence.key[2]} already differs (cosine {cosine}) and no dumped op gave it: the two runs "
            "were given different data"
        )
        return Advice(
            side.op_name,
            divergence.key[0],
            side.op_type,
            divergence.sequence,
            "different inputs",
            detail,
            _TRY["different inputs"],
            False,
        )
    if divergence is not None:
        upstream = _upstream(comparison.graph, divergence.key[0])
        introducing = [op for op in introducing if op.key in upstream] or introducing
    if introducing:
        key, sequence, introduces = introducing[0].key, introducing[0].sequence, True
    elif divergence is not None:
        key, sequence, introduces = divergence.key[0], divergence.sequence, False
    else:
        return None
    rows = [row for row in comparison.compared if row.key[0] == key]
    outputs = [row for row in rows if row.key[1] == "output"]
    inputs = [row for row in rows if row.key[1] == "input"] or _producer_rows(comparison, key)
    side = next(row.mine or row.truth for row in outputs or rows)
    op_type = side.op_type
    cause, detail = _cause(comparison, op_type, outputs, inputs, introduces)
    remedy = _TRY[cause].format(type=op_type) if cause else "rerun with --isolate to measure the op's own error"
    return Advice(side.op_name, key, op_type, sequence, cause, detail, remedy, introduces)


def _from_outside(comparison, row):
    """Whether ``row`` is an op's input that no op of the dumps produced (a feed, a placeholder, the pipeline)."""
    if row.key[1] != "input":
        return False
    entry = next((e for name, e in comparison.graph.items() if dump_names.sanitize(name) == row.key[0]), None)
    source = op_graph.producer(entry, row.key[2]) if entry is not None else None
    if source is None:
        return False
    produced = (dump_names.sanitize(source[0]), "output", source[1])
    return not any(other.key == produced for other in comparison.rows)


def _upstream(graph, key):
    """The sanitized names of op ``key`` and of every op it depends on through data inputs (op_graph.json)."""
    entries = {dump_names.sanitize(name): entry for name, entry in graph.items()}
    found, pending = {key}, [key]
    while pending:
        entry = entries.get(pending.pop())
        for index in range(len(entry["inputs"]) if entry else 0):
            source = op_graph.producer(entry, index)
            producer = dump_names.sanitize(source[0]) if source else None
            if producer is not None and producer not in found:
                found.add(producer)
                pending.append(producer)
    return found


def _producer_rows(comparison, key):
    """The rows of the outputs that feed op ``key`` (op_graph.json), when its inputs were not dumped."""
    entry = next((e for name, e in comparison.graph.items() if dump_names.sanitize(name) == key), None)
    if entry is None:
        return []
    by_key = {row.key: row for row in comparison.compared}
    found = []
    for index in range(len(entry["inputs"])):
        source = op_graph.producer(entry, index)
        row = by_key.get((dump_names.sanitize(source[0]), "output", source[1])) if source else None
        if row is not None:
            found.append(row)
    return found


def _cause(comparison, op_type, outputs, inputs, introduces):
    if op_type in RANDOM_OPS:
        return "random op", f"{op_type} draws random numbers, and its output differs between the runs"
    if any(_non_finite(row.mine) and not _non_finite(row.truth) for row in outputs) and not any(
        _non_finite(row.mine) for row in inputs
    ):
        return "overflow", "its output holds inf/NaN where the ground truth's is finite, from finite inputs"
    for row in outputs:
        if _is_fp16(row.mine) and _largest(row.mine) >= FP16_MAX and _largest(row.truth) > FP16_MAX:
            return "saturation", (
                f"its float16 output reaches {FP16_MAX:g} where the ground truth's goes to "
                f"{_largest(row.truth):.6g}: values beyond float16's range were clamped"
            )
    if op_type in impl_mode.MODELLED_OPS and _high_performance(comparison, op_type):
        return "implmode", f"{op_type} ran its high_performance implementation: {impl_mode.MODELLED_OPS[op_type]}"
    narrowed = [row for row in outputs + inputs if _narrower(row)]
    if narrowed:
        row = narrowed[0]
        what = f"{row.key[1]} {row.key[2]} is {row.dtype_mine} where the ground truth's is {row.dtype_truth}"
        if op_type in ACCUMULATING_OPS:
            return "fp16 accumulation", f"{op_type} accumulates, and its {what}"
        return "cast", f"its {what}"
    if not introduces and inputs:
        worst = max(error_origin.row_error(row, lowered=True) for row in inputs)
        output = max((error_origin.row_error(row) for row in outputs), default=0.0)
        if worst > 0 and output < error_origin.FACTOR * worst:
            return "inherited input", f"its inputs already differ (relative error {_number(worst)})"
    return "", "no numeric cause recognized from the dumped tensors"


def _non_finite(side):
    return any(not np.all(np.isfinite(block)) for block in _blocks(side) if block.dtype.kind in "fc")


def _largest(side):
    largest = 0.0
    for block in _blocks(side):
        finite = block[np.isfinite(block)] if block.dtype.kind in "fc" else block
        if finite.size:
            largest = max(largest, float(np.max(np.abs(finite.astype(np.float64)))))
    return largest


def _blocks(side):
    return error_origin.tensor(side).value_blocks()


def _is_fp16(side):
    dtype = error_origin.tensor(side).numpy_dtype()
    return dtype is not None and dtype == np.float16


def _narrower(row):
    a, b = error_origin.tensor(row.mine).numpy_dtype(), error_origin.tensor(row.truth).numpy_dtype()
    return a is not None and b is not None and a.kind == b.kind == "f" and a.itemsize < b.itemsize


def _high_performance(comparison, op_type):
    """Whether my run used the high_performance implementation of ``op_type`` (Ascend's default), as far as its
    run_config.json tells; True when it does not tell."""
    options = comparison.config.options if comparison.config is not None else {}
    selected = options.get("op_select_implmode")
    listed = options.get("optypelist_for_implmode")
    if not selected or not str(selected).startswith(impl_mode.HIGH_PRECISION):
        return True
    return bool(listed) and op_type not in str(listed).split(",")


def _number(value):
    if not isinstance(value, float):
        return str(value)
    return "inf" if math.isinf(value) else f"{value:.3g}"
