"""What a profile says, read back from its exported Ascend-format files: the numbers the console summary, the
HTML report and ``npu-prof summary`` show.

Only the column names of Ascend's step_trace and op_statistic CSVs are relied on, so the same reading works
for every profile npu_bridge writes.
"""

import csv
import dataclasses
import io
import os
import statistics
from typing import List, Optional

from npu_bridge.core.profiling import columns, layout
from npu_bridge.core.runtime import bounded_files
from npu_bridge.core.runtime.errors import FileReadError, ProfileDataError

_ESTIMATE_ITERATION = columns.STEP_TRACE_ESTIMATE
_ESTIMATE_TOTAL = columns.OP_STATISTIC_ESTIMATE
_CSV_LIMIT = 512 * 1024 * 1024  # bytes: a step trace or op statistic CSV; millions of rows fit


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
    """One op_statistic row."""

    op_type: str
    core_type: str
    count: int
    total_us: float
    ratio: float
    estimate_us: Optional[float]


@dataclasses.dataclass
class ProfileSummary:
    """The headline numbers of one profile (one rank).

    Attributes:
      directory: the profile directory.
      info: its info.json.
      iterations: the step trace rows (empty when training_trace was off).
      op_types: op_statistic rows, largest total first (empty when task_time was off).
    """

    directory: str
    info: dict
    iterations: List[IterationRow]
    op_types: List[OpTypeRow]

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


def load(profile_dir):
    """Reads a profile's summary.

    Args:
      profile_dir: a profile directory (with info.json and exported files).
    Returns:
      A ``ProfileSummary`` of the export info.json names.
    Raises:
      ProfileDataError: missing info.json, an incomplete export (``layout.exported_files``), a CSV that is not a
        regular file, or malformed CSVs.
    """
    info = layout.read_info(profile_dir)
    files = layout.exported_files(profile_dir, info)
    return ProfileSummary(profile_dir, info, _iterations(files.get("step_trace")), _op_types(files.get("op_statistic")))


def _rows(path):
    try:
        return list(csv.DictReader(io.StringIO(bounded_files.read_text(path, _CSV_LIMIT), newline="")))
    except FileReadError as e:
        raise ProfileDataError(f"{path} cannot be read: {e.strerror}") from None
    except csv.Error as e:
        raise ProfileDataError(f"{path} cannot be read: {e}") from None


def _number(row, column, path, cast=float):
    try:
        text = row[column]
    except KeyError:
        raise ProfileDataError(f"{path} lacks the column {column!r}") from None
    if text in (None, "", "N/A"):
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
            _number(r, "Iteration ID", path, int),
            _number(r, "Iteration Time(us)", path),
            _number(r, "FP to BP Time(us)", path),
            _number(r, "Iteration Refresh(us)", path),
            _number(r, "Data Aug Bound(us)", path),
            _number(r, _ESTIMATE_ITERATION, path) if _ESTIMATE_ITERATION in r else None,
        )
        for r in _rows(path)
    ]


def _op_types(path):
    if path is None:
        return []
    rows = [
        OpTypeRow(
            r.get("OP Type", ""),
            r.get("Core Type", ""),
            _number(r, "Count", path, int),
            _number(r, "Total Time(us)", path),
            _number(r, "Ratio(%)", path),
            _number(r, _ESTIMATE_TOTAL, path) if _ESTIMATE_TOTAL in r else None,
        )
        for r in _rows(path)
    ]
    return sorted(rows, key=lambda row: -row.total_us)


def format_text(summary, top=5):
    """The short text summary of a profile.

    Args:
      summary: a ``ProfileSummary``.
      top: how many op types to list.
    Returns:
      Several lines of text.
    """
    info = summary.info
    lines = [
        f"profile of rank {info['rank_id']} (device {info['device_id']}, {info['backend']} backend): "
        f"{summary.directory}"
    ]
    damage = info.get("raw_damage")
    if damage:
        message = damage.get("message") if isinstance(damage, dict) else None
        lines.append(f"  INCOMPLETE PROFILE: {message or damage}")
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
        ops = ", ".join(f"{row.op_type} {row.ratio:.1f}%" for row in summary.op_types[:top])
        lines.append(f"  top op types by time: {ops}")
    hardware = info["settings"].get("hardware_only")
    if hardware:
        lines.append(
            "  NPU hardware data, accepted, no effect here: "
            + ", ".join(f"{key} ({what})" for key, what in sorted(hardware.items()))
        )
    dropped = info.get("runs_dropped", 0)
    if dropped:
        lines.append(f"  {dropped} runs were not recorded: storage_limit {info['settings']['storage_limit_mb']}MB")
    report = os.path.join(summary.directory, layout.REPORT_FILE)
    timeline = info.get("exported", {}).get("timeline")
    lines.append(
        f"  report: {report}"
        + (
            f"; timeline: {os.path.join(summary.directory, timeline)} (open in "
            "https://ui.perfetto.dev or chrome://tracing)"
            if timeline
            else ""
        )
    )
    return "\n".join(lines)


def format_ms(us):
    """us -> "1.234 ms", or "N/A" for None."""
    return "N/A" if us is None else f"{us / 1000:.3f} ms"


def _share(percent):
    return "" if percent is None else f" ({percent:.0f}%)"
