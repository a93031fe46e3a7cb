"""Comparing two dump trees tensor by tensor, in the columns of Ascend's comparison result CSV.

"My dump" (Ascend's NPUDump column) is compared with a ground truth: another dump tree (a real NPU run, or
another run here) or a directory of golden .npy files. Tensors are matched by sanitized op name, input or
output, and index. When a tree holds several steps, one step is compared (the lowest step both trees have,
unless asked); when the same tensor appears more than once in that step (another graph, a loop), its first
occurrence counts.

Metrics, with a = my tensor and b = the ground truth, over the positions where both are finite:
  CosineSimilarity           a.b / (|a| |b|); 1 when both are all zero, 0 when only one is
  MaxAbsoluteError           max |a - b|
  AccumulatedRelativeError   sum |a - b| / sum |b|
  RelativeEuclideanDistance  |a - b| / |b|
  KullbackLeiblerDivergence  KL(p || q) of the value histograms of a and b (100 bins over their common range)
  StandardDeviation          "(mean of a;std of a),(mean of b;std of b)"
  MeanAbsoluteError          mean |a - b|
  RootMeanSquareError        sqrt(mean (a - b)^2)
  MaxRelativeError           max |a - b| / max(|b|, 1e-7)
  MeanRelativeError          mean |a - b| / max(|b|, 1e-7)
A tensor *differs* when it is not bit-for-bit equal (NaNs equal), and *diverges* when its cosine
similarity is below the threshold, its inf/NaN positions differ, or its shape does not match. Rows are
sorted worst first; OpSequence is the execution order in my dump.

When either tree holds op_sources.json (written by the sessions that dumped here), the summary names where each
op it shows was created ("created at file:line in function") and the CSV gets a last column, Source; both are
inert text (``inert_text``), the CSV cell guarded against formulas.

The summary starts with the configuration check of the two runs (``run_config``: options, HCCL_* / ASCEND_* /
NPU_BRIDGE_* variables, versions, seeds, when both trees hold run_config.json) and names, before the first
difference, the ops that introduce error rather than carry it (``error_origin``: the rule and its thresholds) and
the advisor's likely cause at the one on the way to the first diverging op (``compare_advice``); ``isolate``
reruns them on the ground truth's inputs; ``compare_html`` shows it all as a page.
"""

import csv
import dataclasses
import functools
import io
import math
import time
from typing import Optional

import numpy as np

from npu_bridge.core.dump import (
    compare_advice,
    compare_metrics,
    dump_file,
    dump_names,
    dump_tree,
    error_origin,
    op_graph,
    overflow_records,
    run_config,
    tensor_stats,
)
from npu_bridge.core.runtime import atomic_write, inert_text
from npu_bridge.core.runtime.errors import NpuArgumentError

ALGORITHMS = compare_metrics.ALGORITHMS
CSV_HEADER = (
    (
        "Index",
        "OpSequence",
        "OpType",
        "NPUDump",
        "DataType",
        "Address",
        "GroundTruth",
        "DataType",
        "Address",
        "TensorIndex",
        "Shape",
        "OverFlow",
    )
    + ALGORITHMS
    + ("CompareFailReason",)
)
SOURCE_COLUMN = "Source"  # ours, after Ascend's columns, when a tree has op_sources.json
DEFAULT_COSINE_THRESHOLD = 0.99
_RELATIVE_FLOOR = 1e-7
_FP16_MAX = 65504.0
_CACHED_FILES = 8


@dataclasses.dataclass
class Side:
    """One tensor of one tree, as matched."""

    op_name: str  # as in the header when there is one, else the sanitized name from the file name
    op_type: str
    artifact: dump_tree.Artifact
    io: str
    index: int
    timestamp: int


@dataclasses.dataclass
class Row:
    """The comparison of one tensor.

    Attributes:
      key: (sanitized op name, "input"/"output", index).
      sequence: execution order of the op in my dump (1 = first), None when only the ground truth has it.
      mine, truth: the matched ``Side`` of each tree (None when missing).
      metrics: {algorithm: value} (floats, or a text for StandardDeviation); empty when not comparable.
      shape, dtype_mine, dtype_truth: for the CSV.
      overflow: "YES" when my tensor holds inf/NaN (or, for fp16, values at 65504), "NO" otherwise.
      comparable: both sides have numeric values (resource handles, strings and the like have none).
      identical: bit-for-bit equal.
      diverged: see the module docstring.
      reason: why the tensor could not be (fully) compared; "" when it was.
    """

    key: tuple
    sequence: Optional[int]
    mine: Optional[Side]
    truth: Optional[Side]
    metrics: dict = dataclasses.field(default_factory=dict)
    shape: str = ""
    dtype_mine: str = ""
    dtype_truth: str = ""
    overflow: str = ""
    comparable: bool = False
    identical: bool = False
    diverged: bool = False
    reason: str = ""

    @property
    def label(self):
        """e.g. "dense/MatMul output 0"."""
        side = self.mine or self.truth
        return f"{side.op_name} {self.key[1]} {self.key[2]}"


class Comparison:
    """The result of ``compare``: rows worst first, a summary, the CSV.

    Attributes:
      rows: ``Row`` list, worst first.
      mine, truth: the two trees.
      step: the step compared (None when neither tree has steps).
      threshold: the cosine similarity threshold of divergence.
      duplicates: repeated occurrences of tensors that were not compared (loops, other graphs).
      sources: {op name: "file:line in function"} from the trees' op_sources.json (mine wins), maybe empty.
      graph: {op name: op_graph.json entry} of the trees (mine wins), maybe empty.
      origins: ``error_origin.OpError`` of every op both trees dumped, in execution order.
      config: the ``run_config.ConfigCheck`` of the two trees (None: not made).
    """

    def __init__(self, rows, mine, truth, step, threshold, duplicates, sources=None, graph=None, config=None):
        self.rows = sorted(rows, key=_badness)
        self.mine, self.truth, self.step, self.threshold = mine, truth, step, threshold
        self.duplicates = duplicates
        self.graph = graph or {}
        self.origins = error_origin.find(self.rows, self.graph)
        self.config = config
        self.sources = {name: site for name, site in (sources or {}).items() if isinstance(site, str)}
        self._sanitized = {dump_names.sanitize(name): site for name, site in self.sources.items()}

    def source(self, row):
        """Where the row's op was created ("file:line in function", as read from a file: not inert), or None."""
        for side in (row.mine, row.truth):
            if side is not None and side.op_name in self.sources:
                return self.sources[side.op_name]
        return self._sanitized.get(row.key[0])

    def source_of(self, op_name):
        """Where the op named ``op_name`` was created (not inert), or None."""
        return self.sources.get(op_name) or self._sanitized.get(dump_names.sanitize(op_name))

    def describe(self, row):
        """e.g. "dense/MatMul output 0 (cosine 0.53, max abs err 2.4), created at model.py:21 in build" (inert)."""
        site = self.source(row)
        return _describe(row) + (f", created at {inert_text.value(site)}" if site else "")

    def _describe_name(self, op_name):
        site = self.source_of(op_name)
        return inert_text.value(op_name) + (f", created at {inert_text.value(site)}" if site else "")

    @functools.cached_property
    def advice(self):
        """The ``compare_advice.Advice`` for this comparison, or None when no op introduces error or diverges."""
        return compare_advice.advise(self)

    @property
    def introducing(self):
        """The ops that introduce error (``error_origin``), in execution order."""
        return [op for op in self.origins if op.introduces]

    @property
    def compared(self):
        """Rows whose tensors exist on both sides with numeric values."""
        return [row for row in self.rows if row.comparable]

    def _first(self, predicate):
        candidates = [row for row in self.compared if predicate(row)]
        return min(candidates, key=lambda row: row.sequence) if candidates else None

    @property
    def first_difference(self):
        """The first tensor in execution order that is not bit-for-bit equal, or None."""
        return self._first(lambda row: not row.identical)

    @property
    def first_divergence(self):
        """The first tensor in execution order that diverges, or None."""
        return self._first(lambda row: row.diverged)

    def summary(self, top=5):
        """A few lines a person reads first: configuration differences, counts, the ops that introduce error, the
        first diverging op, the worst tensors."""
        compared = self.compared
        step = "" if self.step is None else f" at step {self.step}"
        lines = [self.config.summary_line()] if self.config is not None else []
        lines += [
            f"compared {len(compared)} tensors of {len({row.key[0] for row in compared})} ops{step}",
            f"  my dump:      {inert_text.value(self.mine)}",
            f"  ground truth: {inert_text.value(self.truth)}",
        ]
        only_mine = sum(1 for row in self.rows if row.truth is None)
        only_truth = sum(1 for row in self.rows if row.mine is None)
        without_values = sum(1 for row in self.rows if row.mine and row.truth and not row.comparable)
        lines.append(
            f"identical: {sum(row.identical for row in compared)}, differ: "
            f"{sum(not row.identical for row in compared)}, diverged (cosine < {self.threshold:g} or "
            f"inf/NaN or shape mismatch): {sum(row.diverged for row in compared)}; only in my dump: "
            f"{only_mine}, only in the ground truth: {only_truth}"
            + (f"; without numeric values: {without_values}" if without_values else "")
        )
        if self.duplicates:
            lines.append(f"({self.duplicates} repeated tensors ignored: the first occurrence of each is compared)")
        lines.extend(error_origin.summary_lines(self.origins, lambda op: self._describe_name(op.name)))
        if self.advice is not None:
            lines.append(self.advice.line(self._describe_name))
        difference, divergence = self.first_difference, self.first_divergence
        if difference is None:
            lines.append("no tensor differs")
        else:
            lines.append(f"first difference: #{difference.sequence} {self.describe(difference)}")
        if divergence is None:
            lines.append(f"no op diverges (every cosine similarity >= {self.threshold:g})")
        else:
            lines.append(f"first diverging op: #{divergence.sequence} {self.describe(divergence)}")
        worst = [row for row in compared if not row.identical][:top]
        if worst:
            lines.append("worst tensors:")
            lines.extend(f"  #{row.sequence} {self.describe(row)}" for row in worst)
        return "\n".join(lines)

    def write_csv(self, path):
        """Writes the result CSV (Ascend's comparison columns) to ``path``, atomically.

        Raises:
          OutputFileError: ``path`` is not a regular file (a FIFO, a device, a directory) or cannot be written.
        """
        text = io.StringIO(newline="")
        writer = csv.writer(text)
        with_sources = bool(self.sources)
        writer.writerow(CSV_HEADER + ((SOURCE_COLUMN,) if with_sources else ()))
        for number, row in enumerate(self.rows, 1):
            cells = _csv_cells(number, row)
            if with_sources:
                cells.append(inert_text.csv_name(self.source(row) or ""))
            writer.writerow(cells)
        atomic_write.write_output(path, text.getvalue(), "result CSV")


def compare(mine, truth, step=None, cosine_threshold=DEFAULT_COSINE_THRESHOLD, progress=None, config=None):
    """Compares two dump trees.

    Args:
      mine: my dump tree (directory or file).
      truth: the ground truth: a dump tree or a directory of golden .npy files.
      step: the step to compare; default: the lowest step both trees hold.
      cosine_threshold: a tensor whose cosine similarity is below this diverges.
      progress: optional callable(done, total) called while comparing.
      config: the ``run_config.check`` of the trees when already made (default: made here).
    Returns:
      A ``Comparison``.
    Raises:
      DumpTreeError: a tree does not exist or holds no tensors.
      ValueError: ``step`` is not in the trees, or the trees share no step.
      DumpFormatError: a file is damaged.
    """
    artifacts = {}
    for label, root in (("my dump", mine), ("ground truth", truth)):
        found = [a for a in dump_tree.scan(root) if a.name.kind in ("dump", "golden", "converted")]
        artifacts[label] = dump_tree.require_artifacts(root, found, "tensors")
    chosen = _choose_step(artifacts["my dump"], artifacts["ground truth"], step, mine, truth)
    my_tensors, my_duplicates = _tensors(artifacts["my dump"], chosen)
    truth_tensors, truth_duplicates = _tensors(artifacts["ground truth"], chosen)
    order = {}
    for side in sorted(my_tensors.values(), key=lambda s: (s.timestamp, s.artifact.path)):
        order.setdefault(side.op_name, len(order) + 1)
    keys = sorted(set(my_tensors) | set(truth_tensors))
    loader = _Loader()
    rows = []
    for done, key in enumerate(keys, 1):
        mine_side, truth_side = my_tensors.get(key), truth_tensors.get(key)
        row = Row(key, order.get(mine_side.op_name) if mine_side else None, mine_side, truth_side)
        if mine_side and truth_side:
            _fill(row, loader.tensor(mine_side), loader.tensor(truth_side), cosine_threshold)
        else:
            row.reason = "no match in the ground truth" if truth_side is None else "no match in my dump"
        rows.append(row)
        if progress:
            progress(done, len(keys))
    sources = {**overflow_records.read_sources(truth), **overflow_records.read_sources(mine)}
    graph = {**op_graph.read(truth), **op_graph.read(mine)}
    config = run_config.check(mine, truth) if config is None else config
    duplicates = my_duplicates + truth_duplicates
    return Comparison(rows, mine, truth, chosen, cosine_threshold, duplicates, sources, graph, config)


def _choose_step(mine, truth, step, mine_root, truth_root):
    my_steps = {a.step for a in mine if a.step is not None}
    truth_steps = {a.step for a in truth if a.step is not None}
    if step is not None:
        for root, steps in ((mine_root, my_steps), (truth_root, truth_steps)):
            if steps and step not in steps:
                raise NpuArgumentError(f"step {step} is not in {root}; it holds steps {sorted(steps)}")
        return step
    if my_steps and truth_steps:
        common = my_steps & truth_steps
        if not common:
            raise NpuArgumentError(
                f"{mine_root} (steps {sorted(my_steps)}) and {truth_root} (steps "
                f"{sorted(truth_steps)}) share no step; choose one with step=/--step"
            )
        return min(common)
    steps = my_steps or truth_steps
    return min(steps) if steps else None


def _tensors(artifacts, step):
    """Returns ({key: Side} of the first occurrence of each tensor at ``step``, number of repeats).

    Dump files come first; the golden or converted .npy copies of the same tensors only fill gaps.
    """
    candidates = [a for a in artifacts if a.step is None or step is None or a.step == step]
    tensors, repeats = {}, 0
    for kind in ("dump", "converted", "golden"):
        of_kind = sorted((a for a in candidates if a.name.kind == kind), key=lambda a: (a.name.timestamp or 0, a.path))
        seen = set()
        for artifact in of_kind:
            for side in _sides(artifact):
                key = (dump_names.sanitize(side.op_name), side.io, side.index)
                repeats += key in seen
                seen.add(key)
                tensors.setdefault(key, side)
    return tensors, repeats


def _sides(artifact):
    name = artifact.name
    if name.kind != "dump":
        return [Side(name.op_name, name.op_type, artifact, name.io, name.index, name.timestamp or 0)]
    header = dump_file.load(artifact.path, name)
    return [
        Side(header.op_name, name.op_type, artifact, tensor.io, tensor.index, name.timestamp or 0)
        for tensor in header.tensors
    ]


class _Loader:
    """Reads the headers of files on demand, keeping a few (a dump file holds several tensors); tensor data stays in
    the files until compared, block by block."""

    def __init__(self):
        self._files = {}

    def tensor(self, side):
        """Returns the ``TensorData`` of a matched tensor."""
        path = side.artifact.path
        if path not in self._files:
            if len(self._files) >= _CACHED_FILES:
                self._files.pop(next(iter(self._files)))
            self._files[path] = dump_file.load(path, side.artifact.name)
        loaded = self._files[path]
        return (loaded.inputs if side.io == "input" else loaded.outputs)[side.index]


def _fill(row, mine, truth, threshold):
    """Fills ``row`` from the two ``TensorData``, reading them block by block."""
    row.dtype_mine, row.dtype_truth = mine.dtype_name, truth.dtype_name
    a_dtype, b_dtype = mine.numpy_dtype(), truth.numpy_dtype()
    row.shape = str(list(mine.logical_shape() if a_dtype is not None else mine.shape))
    if a_dtype is None or b_dtype is None:
        row.reason = "no numeric values" if a_dtype is None and b_dtype is None else "only one side has numeric values"
        row.diverged = (a_dtype is None) != (b_dtype is None)
        row.comparable = row.diverged
        return
    row.comparable = True
    a_shape, b_shape = mine.logical_shape(), truth.logical_shape()
    if a_shape != b_shape:
        row.reason = f"shape {list(a_shape)} vs {list(b_shape)}"
        row.diverged = True
        if np.prod(a_shape, dtype=np.int64) != np.prod(b_shape, dtype=np.int64):
            row.overflow = _overflow_text(any(_overflows(block) for block in mine.value_blocks()))
            return
    if a_dtype.kind == "c" or b_dtype.kind == "c":
        row.overflow = _overflow_text(any(_overflows(block) for block in mine.value_blocks()))
        blocks = zip(mine.value_blocks(), truth.value_blocks())
        row.identical = all(np.array_equal(a, b, equal_nan=True) for a, b in blocks)
        row.reason = row.reason or "complex values: only compared for equality"
        row.diverged = row.diverged or not row.identical
        return
    pairs = tensor_stats.compare_pairs(mine, truth, _RELATIVE_FLOOR, _overflows, compare_metrics.HISTOGRAM_BINS)
    row.overflow = _overflow_text(pairs.overflow)
    row.identical = not row.reason and a_dtype == b_dtype and pairs.identical
    if pairs.special_differs:
        row.reason = _join(row.reason, f"inf/NaN differ at {pairs.special_differs} positions")
        row.diverged = True
    row.metrics = compare_metrics.metrics(pairs)
    cosine = row.metrics["CosineSimilarity"]
    if not math.isnan(cosine) and cosine < threshold:
        row.diverged = True


def _overflow_text(overflows):
    return "YES" if overflows else "NO"


def _overflows(array):
    if array.dtype.kind not in "fc":
        return False
    if not np.all(np.isfinite(array)):
        return True
    return array.dtype == np.float16 and bool(np.any(np.abs(array) >= _FP16_MAX))


def _join(first, second):
    return f"{first}; {second}" if first else second


def _badness(row):
    """Sort key: diverged first, then lowest cosine, then largest error; rows without a comparison last."""
    if not row.comparable:
        return (3, 0.0, 0.0, row.key)
    cosine = row.metrics.get("CosineSimilarity", float("nan"))
    cosine = -1.0 if isinstance(cosine, float) and math.isnan(cosine) else cosine
    error = row.metrics.get("MaxAbsoluteError", 0.0)
    error = 0.0 if isinstance(error, float) and math.isnan(error) else error
    return (0 if row.diverged else 1 if not row.identical else 2, cosine, -error, row.key)


def _describe(row):
    text = inert_text.value(row.label)
    if "CosineSimilarity" in row.metrics:
        text += (
            f" (cosine {_number(row.metrics['CosineSimilarity'])}, max abs err "
            f"{_number(row.metrics['MaxAbsoluteError'])})"
        )
    if row.reason:
        text += f" [{row.reason}]"
    return text


def _number(value):
    if isinstance(value, str):
        return value
    return "NaN" if math.isnan(value) else f"{value:.6g}"


def _csv_cells(number, row):
    mine, truth = row.mine, row.truth
    side = mine or truth
    cells = [
        number,
        "" if row.sequence is None else row.sequence,
        inert_text.csv_name(side.op_type),
        inert_text.csv_name(mine.op_name) if mine else "*",
        row.dtype_mine or "*",
        "NaN",
        inert_text.csv_name(truth.op_name) if truth else "*",
        row.dtype_truth or "*",
        "NaN",
        inert_text.csv_name(f"{side.op_name}:{row.key[1]}:{row.key[2]}"),
        row.shape,
        row.overflow or "NaN",
    ]
    for algorithm in ALGORITHMS:
        value = row.metrics.get(algorithm)
        cells.append("NaN" if value is None else _number(value))
    cells.append(inert_text.csv_cell(row.reason))
    return cells


def default_csv_name(now=None):
    """compare_result_{YYYYmmddHHMMSS}.csv, msaccucmp's style."""
    return f"compare_result_{time.strftime('%Y%m%d%H%M%S', time.localtime(now))}.csv"
