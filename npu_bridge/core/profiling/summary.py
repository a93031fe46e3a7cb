"""What a profile says, read back from its exported Ascend-format files: the numbers the console summary, the
HTML report and ``npu-prof summary`` show.

Only column names of the step_trace and op_summary CSVs are relied on, so the same reading works for every
profile npu_bridge writes.

Warm-up: a graph's first iteration includes TensorFlow's graph optimization and first kernel calls (one op of it
can take longer than all its later runs together). The means leave out each graph's first iteration when the
graph has more (``ProfileSummary.steady_iterations``), and so do the op statistics unless asked to keep them
(``load(include_warmup=True)``): they are summed here from op_summary (one row per op execution) rather than read
from op_statistic, which counts every execution, as Ascend's does.
"""

import csv
import dataclasses
import io
import os
import statistics
from typing import List, Optional, Tuple

from npu_bridge.core.profiling import columns, layout
from npu_bridge.core.runtime import bounded_files, inert_text
from npu_bridge.core.runtime.errors import FileReadError, ProfileDataError

_ESTIMATE_ITERATION = columns.STEP_TRACE_ESTIMATE
_ESTIMATE_OP = columns.OP_SUMMARY_ESTIMATES[0]
_CSV_LIMIT = 512 * 1024 * 1024  # bytes: a step trace CSV (read whole); millions of rows fit


@dataclasses.dataclass
class IterationRow:
    """One step trace row (us; None where the CSV says N/A)."""

    model_id: int
    iteration_id: int
    iteration_time: Optional[float]
    fp_bp: Optional[float]
    refresh: Optional[float]
    data_aug: Optional[float]
    estimate: Optional[float]


@dataclasses.dataclass
class OpTypeRow:
    """The executions of one op type: op_statistic's numbers, per TensorFlow op type.

    Attributes:
      op_type: the OP Type of the artifacts (Ascend's name: ``Cast`` for a precision rounding).
      core_type: the Task Type (AI_CORE, AI_CPU, HCCL).
      count, total_us: how many executions and their total time.
      ratio: the share of the total time of all op types, in percent.
      estimate_us: the estimated Ascend 910 total (simulated Ascend backend), else None.
      tf_op_type: the op type TensorFlow ran (``NpuRound`` for the ``Cast`` of a precision rounding).
    """

    op_type: str
    core_type: str
    count: int
    total_us: float
    ratio: float
    estimate_us: Optional[float]
    tf_op_type: str = ""


@dataclasses.dataclass
class Warmup:
    """What the op statistics count of the warm-up: each graph's first iteration, when the graph has more.

    Attributes:
      included: the op statistics count them (``load(include_warmup=True)``).
      iterations: (model id, iteration id) of the warm-up iterations.
      op_runs: the op executions in them.
      total_us: the op time in them.
    """

    included: bool
    iterations: Tuple[Tuple[int, int], ...] = ()
    op_runs: int = 0
    total_us: float = 0.0


@dataclasses.dataclass
class ProfileSummary:
    """The headline numbers of one profile (one rank).

    Attributes:
      directory: the profile directory.
      info: its info.json.
      iterations: the step trace rows (empty when training_trace was off).
      op_types: per (op type, TensorFlow op type, core type), largest total first, without the warm-up unless
        ``warmup.included`` (empty when task_time was off).
      warmup: what ``op_types`` left out or kept of the warm-up.
    """

    directory: str
    info: dict
    iterations: List[IterationRow]
    op_types: List[OpTypeRow]
    warmup: Warmup = dataclasses.field(default_factory=lambda: Warmup(False))

    @property
    def steady_iterations(self):
        """The iterations without each graph's first one (graph optimization and warm-up) when a graph has more."""
        by_model = {}
        for row in self.iterations:
            by_model.setdefault(row.model_id, []).append(row)
        kept = []
        for rows in by_model.values():
            kept.extend(rows[1:] if len(rows) > 1 else rows)
        return kept

    def mean(self, field):
        """Mean of an ``IterationRow`` field over ``steady_iterations`` (None when no value)."""
        values = [getattr(row, field) for row in self.steady_iterations if getattr(row, field) is not None]
        return statistics.fmean(values) if values else None

    def share(self, field):
        """The percentage of the iteration time that ``field`` (fp_bp, refresh, data_aug) takes, between 0 and 100.

        Taken over the ``steady_iterations`` in which the FP and BP points ran, where data aug bound, FP to BP
        and refresh make up the iteration (a first iteration has no data aug bound: its time starts at FP), so
        the three shares add up to 100%. Iterations without the points (a cond's other branch) count in neither
        the parts nor the whole; when no iteration has them, a share is taken over the iterations that have
        ``field``. Each iteration's part is bounded by its own time, which only matters when runs of one graph
        overlap (threads): the time between their ends is then shorter than the work of one. None when no
        iteration qualifies.
        """
        timed = [row for row in self.steady_iterations if row.iteration_time is not None and row.iteration_time > 0]
        used = [row for row in timed if row.fp_bp is not None and row.refresh is not None]
        used = used or [row for row in timed if getattr(row, field) is not None]
        if not used:
            return None
        part = sum(min(max(getattr(row, field) or 0.0, 0.0), row.iteration_time) for row in used)
        return 100.0 * part / sum(row.iteration_time for row in used)


def load(profile_dir, include_warmup=False):
    """Reads a profile's summary.

    Args:
      profile_dir: a profile directory (with info.json and exported files).
      include_warmup: count each graph's first iteration in the op statistics too.
    Returns:
      A ``ProfileSummary`` of the export info.json names.
    Raises:
      ProfileDataError: missing info.json, an incomplete export (``layout.exported_files``), a CSV that is not a
        regular file, or malformed CSVs.
    """
    info = layout.read_info(profile_dir)
    files = layout.exported_files(profile_dir, info)
    op_types, warmup = _op_types(files.get("op_summary"), _warmup_models(info), include_warmup)
    return ProfileSummary(profile_dir, info, _iterations(files.get("step_trace")), op_types, warmup)


def _rows(path):
    try:
        return list(csv.DictReader(io.StringIO(bounded_files.read_text(path, _CSV_LIMIT), newline="")))
    except FileReadError as e:
        raise ProfileDataError(f"{path} cannot be read: {e.strerror}") from None
    except csv.Error as e:
        raise ProfileDataError(f"{path} cannot be read: {e}") from None


def _number(row, column, path, cast=float, required=False):
    try:
        text = row[column]
    except KeyError:
        raise ProfileDataError(f"{path} lacks the column {column!r}") from None
    if text in (None, "", "N/A"):
        if required:  # a row cut short (a truncated file) has no value where every row has one
            raise ProfileDataError(f"{path}: a row has no {column!r} (the file is cut short or damaged)")
        return None
    try:
        return cast(text)
    except ValueError:
        raise ProfileDataError(f"{path}: column {column!r} holds {text!r}, not a number") from None


def _iterations(path):
    if path is None:
        return []
    return [
        IterationRow(
            _number(r, "Model ID", path, int) or 0,
            _number(r, "Iteration ID", path, int, required=True),
            _number(r, "Iteration Time(us)", path),
            _number(r, "FP to BP Time(us)", path),
            _number(r, "Iteration Refresh(us)", path),
            _number(r, "Data Aug Bound(us)", path),
            _number(r, _ESTIMATE_ITERATION, path) if _ESTIMATE_ITERATION in r else None,
        )
        for r in _rows(path)
    ]


def _warmup_models(info):
    """The model ids whose first iteration is warm-up: those with more than one iteration (info.json's models)."""
    models = info.get("models")
    if not isinstance(models, list):
        return frozenset()
    return frozenset(
        m.get("model_id")
        for m in models
        if isinstance(m, dict) and isinstance(m.get("iterations"), int) and m["iterations"] > 1
    )


def _op_types(path, warmup_models, include_warmup):
    """(op type rows, ``Warmup``) summed from op_summary, one row per op execution."""
    warmup = Warmup(include_warmup)
    if path is None:
        return [], warmup
    totals = {}  # (op type, TensorFlow op type, core type) -> [count, total us, estimate us or None]
    warm_iterations = set()
    for row in _stream_rows(path):
        model, iteration = _number(row, "Model ID", path, int), _number(row, "Infer ID", path, int)
        duration = _number(row, "Task Duration(us)", path) or 0.0
        if model in warmup_models and iteration == 1:
            warm_iterations.add((model, iteration))
            warmup.op_runs += 1
            warmup.total_us += duration
            if not include_warmup:
                continue
        op_type = _text(row, "OP Type", path)
        key = (op_type, row.get(columns.OP_SUMMARY_TENSORFLOW) or op_type, _text(row, "Task Type", path))
        total = totals.setdefault(key, [0, 0.0, None])
        total[0] += 1
        total[1] += duration
        estimate = _number(row, _ESTIMATE_OP, path) if _ESTIMATE_OP in row else None
        if estimate is not None:  # AI_CPU and HCCL tasks are not estimated (N/A)
            total[2] = (total[2] or 0.0) + estimate
    warmup.iterations = tuple(sorted(warm_iterations))
    grand_total = sum(total for _, total, _ in totals.values()) or 1.0
    rows = [
        OpTypeRow(op_type, core, count, total, 100.0 * total / grand_total, estimate, tf_op_type)
        for (op_type, tf_op_type, core), (count, total, estimate) in totals.items()
    ]
    return sorted(rows, key=lambda row: (-row.total_us, row.op_type, row.tf_op_type)), warmup


def _stream_rows(path):
    """The rows of a CSV as dicts, read piece by piece (op_summary has a row per op execution)."""
    try:
        with io.TextIOWrapper(bounded_files.open_regular(path), encoding="utf-8", newline="") as f:
            yield from csv.DictReader(f)
    except FileReadError as e:
        raise ProfileDataError(f"{path} cannot be read: {e.strerror}") from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise ProfileDataError(f"{path} cannot be read: {e}") from None


def _text(row, column, path):
    text = row.get(column)
    if text is None:
        raise ProfileDataError(f"{path} lacks the column {column!r}")
    return text


def format_text(summary, top=5):
    """The short text summary of a profile.

    Args:
      summary: a ``ProfileSummary``.
      top: how many op types to list.
    Returns:
      Several lines of text; what comes from files is inert (``inert_text.value``).
    """
    info = summary.info
    shown = inert_text.value
    lines = [
        f"profile of rank {shown(info['rank_id'])} (device {shown(info['device_id'])}, {shown(info['backend'])} "
        f"backend): {shown(summary.directory)}"
    ]
    damage = info.get("raw_damage")
    if damage:
        message = damage.get("message") if isinstance(damage, dict) else None
        lines.append(f"  INCOMPLETE PROFILE: {shown(message or damage)}")
    steady = summary.steady_iterations
    if summary.iterations:
        graphs = sorted({row.model_id for row in summary.iterations})
        mean = summary.mean("iteration_time")
        lines.append(
            f"  {len(summary.iterations)} iterations of graph {', '.join(map(str, graphs))}; mean "
            f"iteration time {format_ms(mean)} over {len(steady)} (each graph's first iteration excluded when "
            "it has more)"
        )
        parts = [("FP to BP", "fp_bp"), ("refresh", "refresh"), ("data aug bound", "data_aug")]
        lines.append(
            "  "
            + ", ".join(
                f"{name} {format_ms(summary.mean(field))}{_share(summary.share(field))}" for name, field in parts
            )
        )
        estimate = summary.mean("estimate")
        if estimate is not None:
            lines.append(f"  estimated Ascend 910 compute per iteration: {format_ms(estimate)} (roofline estimate)")
    else:
        lines.append("  no step trace (training_trace is off)")
    if summary.op_types:
        ops = ", ".join(f"{op_type_text(row)} {row.ratio:.1f}%" for row in summary.op_types[:top])
        lines.append(f"  top op types by time{warmup_text(summary.warmup, short=True)}: {ops}")
    hardware = info["settings"].get("hardware_only")
    if hardware:
        lines.append(
            "  NPU hardware data, accepted, no effect here: "
            + ", ".join(f"{shown(key)} ({shown(what)})" for key, what in sorted(hardware.items()))
        )
    dropped = info.get("runs_dropped", 0)
    if dropped:
        lines.append(
            f"  {shown(dropped)} runs were not recorded: storage_limit {shown(info['settings']['storage_limit_mb'])}MB"
        )
    report = os.path.join(summary.directory, layout.REPORT_FILE)
    timeline = (info.get("exported") or {}).get("timeline")
    lines.append(
        f"  report: {shown(report)}"
        + (
            f"; timeline: {shown(os.path.join(summary.directory, timeline))} (open in "
            "https://ui.perfetto.dev or chrome://tracing)"
            if timeline
            else ""
        )
    )
    return "\n".join(lines)


def op_type_text(row):
    """An op type as the summary names it: the artifacts' OP Type, and TensorFlow's where it differs (inert)."""
    shown = inert_text.value
    if row.tf_op_type in ("", row.op_type):
        return shown(row.op_type)
    return f"{shown(row.op_type)} (TF {shown(row.tf_op_type)})"


def warmup_text(warmup, short=False):
    """What the op statistics did with the warm-up, in words (in short form "" when there was none)."""
    count = len(warmup.iterations)
    if not count:
        return "" if short else "No warm-up to leave out of the op statistics: no graph ran more than one iteration."
    graphs = ", ".join(f"graph_{model}" for model, _ in warmup.iterations)
    what = f"the first iteration of {graphs}" if count == 1 else f"the first iterations of {count} graphs ({graphs})"
    if short:
        return f" ({what} {'included' if warmup.included else 'left out'})"
    amount = f"{warmup.op_runs} op executions, {format_ms(warmup.total_us)} of op time"
    if warmup.included:
        return f"Op statistics include the warm-up, {what}: {amount}."
    return (
        f"Op statistics leave out the warm-up, {what}: {amount} (TensorFlow optimizes a graph and prepares its "
        "kernels in its first run). --include-warmup (npu-prof summary, npu-prof report) counts it."
    )


def format_ms(us):
    """us -> "1.234 ms", or "N/A" for None."""
    return "N/A" if us is None else f"{us / 1000:.3f} ms"


def _share(percent):
    return "" if percent is None else f" ({percent:.0f}%)"
