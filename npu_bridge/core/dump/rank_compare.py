"""``npu-dump compare`` of two multi-rank dumps: rank by rank, one summary line per rank, and the rank that diverges
first and the one that diverges most.

Ranks are matched by device id (``rank_trees``: the {dump_path}/{time}/{device_id} directories). Each pair is
compared as ``dump_compare.compare`` compares two trees; a device that only one dump holds is listed as such. The
rank whose first diverging tensor has the earliest dump time diverges first (ranks of one host share a clock); the
one with the lowest cosine similarity among its diverging tensors diverges most.
"""

import dataclasses
import math
import os
from typing import Optional

from npu_bridge.core.dump import dump_compare
from npu_bridge.core.runtime import inert_text


@dataclasses.dataclass
class RankComparison:
    """One device's comparison (``comparison`` None when only one dump holds the device: ``missing`` says which)."""

    device_id: int
    mine: Optional[str]
    truth: Optional[str]
    comparison: Optional[dump_compare.Comparison] = None
    missing: str = ""


def compare(mine_ranks, truth_ranks, progress=None, **options):
    """Compares two jobs' dumps rank by rank.

    Args:
      mine_ranks, truth_ranks: ``rank_trees.RankTree`` lists.
      progress: optional callable(device id) -> progress callable for that rank's comparison.
      options: passed to ``dump_compare.compare`` (step, cosine_threshold).
    Returns:
      ``RankComparison`` list by device id.
    Raises:
      As ``dump_compare.compare``.
    """
    mine = {tree.device_id: tree.root for tree in mine_ranks}
    truth = {tree.device_id: tree.root for tree in truth_ranks}
    found = []
    for device in sorted(set(mine) | set(truth)):
        pair = RankComparison(device, mine.get(device), truth.get(device))
        if pair.mine is None or pair.truth is None:
            pair.missing = "only in the ground truth" if pair.mine is None else "only in my dump"
        else:
            pair.comparison = dump_compare.compare(
                pair.mine, pair.truth, progress=progress(device) if progress else None, **options
            )
        found.append(pair)
    return found


def device_path(output, device_id, default_extension=".csv"):
    """The output file of one device: ``output`` with ``_device{id}`` before its extension (the default when it has
    none)."""
    stem, extension = os.path.splitext(output)
    return f"{stem}_device{device_id}{extension or default_extension}"


def first_diverging(pairs):
    """The ``RankComparison`` whose first diverging tensor has the earliest dump time, or None."""
    diverging = [p for p in pairs if p.comparison is not None and p.comparison.first_divergence is not None]
    return min(diverging, key=lambda p: (_time(p.comparison.first_divergence), p.device_id), default=None)


def most_diverging(pairs):
    """The ``RankComparison`` holding the diverging tensor of lowest cosine similarity, or None."""
    diverging = [p for p in pairs if p.comparison is not None and p.comparison.first_divergence is not None]
    return min(diverging, key=lambda p: (_lowest_cosine(p.comparison), p.device_id), default=None)


def render(pairs, mine, truth):
    """Lines: one per device, then the rank that diverges first and the one that diverges most (inert)."""
    lines = [
        f"rank by rank: {len(pairs)} devices; my dump {inert_text.value(mine)}, ground truth {inert_text.value(truth)}"
    ]
    for pair in pairs:
        lines.append(f"  device {pair.device_id}: {_line(pair)}")
    first, most = first_diverging(pairs), most_diverging(pairs)
    if first is None:
        lines.append("no rank diverges")
        return lines
    row = first.comparison.first_divergence
    lines.append(f"first divergence: device {first.device_id}: #{row.sequence} {first.comparison.describe(row)}")
    row = _lowest_row(most.comparison)
    lines.append(f"largest divergence: device {most.device_id}: #{row.sequence} {most.comparison.describe(row)}")
    return lines


def _line(pair):
    if pair.comparison is None:
        where = pair.mine if pair.mine is not None else pair.truth
        return f"{pair.missing} ({inert_text.value(where)})"
    comparison = pair.comparison
    compared = comparison.compared
    step = "" if comparison.step is None else f" at step {comparison.step}"
    text = (
        f"{len(compared)} tensors{step}: identical {sum(r.identical for r in compared)}, differ "
        f"{sum(not r.identical for r in compared)}, diverged {sum(r.diverged for r in compared)}; "
    )
    config = comparison.config
    if config is not None and config.differences:
        text = f"configuration differs in {len(config.differences)} settings; " + text
    row = comparison.first_divergence
    if row is None:
        return text + "no op diverges"
    return text + f"first diverging op: #{row.sequence} {comparison.describe(row)}"


def _time(row):
    side = row.mine or row.truth
    return side.timestamp


def _lowest_row(comparison):
    diverged = [row for row in comparison.compared if row.diverged]
    return min(diverged, key=lambda row: (_cosine(row), row.sequence or 0))


def _lowest_cosine(comparison):
    return _cosine(_lowest_row(comparison))


def _cosine(row):
    value = row.metrics.get("CosineSimilarity", -math.inf)
    return -math.inf if not isinstance(value, float) or math.isnan(value) else value
