"""The training trace: one row per iteration with Ascend's step_trace fields.

For iteration i of a model (times in us since the epoch, "prev" = the model's previous iteration):
  FP Start        start of the model's FP point op in the iteration
  BP End          end of the model's BP point op in the iteration
  Iteration End   end of the iteration's last op
  Iteration Time  Iteration End - prev Iteration End (first iteration: Iteration End - FP Start)
  FP to BP Time   BP End - FP Start
  Iteration Refresh   Iteration End - BP End (optimizer updates and whatever follows the backward pass)
  Data Aug Bound  FP Start - prev Iteration End (first iteration: N/A)
  Reduce Start / Reduce Duration   one pair per collective in the iteration, in order
Rows cover the training models (those with backward ops); when no model trains, every model.
"""

import dataclasses
from typing import List, Optional, Tuple

from npu_bridge.core.profiling import columns, op_classes

NA = "N/A"


@dataclasses.dataclass
class Iteration:
    """What the step trace keeps of one iteration (times in ns since the epoch, None when absent)."""

    model_id: int
    iteration_id: int
    start_ns: int
    end_ns: int
    fp_start_ns: Optional[int]
    bp_end_ns: Optional[int]
    reduces: List[Tuple[int, int]]
    estimate_us: Optional[float] = None
    prev_end_ns: Optional[int] = None

    @property
    def time_ns(self):
        """Iteration Time in ns, None when it cannot be computed."""
        if self.prev_end_ns is not None:
            return self.end_ns - self.prev_end_ns
        return None if self.fp_start_ns is None else self.end_ns - self.fp_start_ns

    @property
    def fp_bp_ns(self):
        """FP to BP Time in ns or None."""
        return None if None in (self.fp_start_ns, self.bp_end_ns) else self.bp_end_ns - self.fp_start_ns

    @property
    def refresh_ns(self):
        """Iteration Refresh in ns or None."""
        return None if self.bp_end_ns is None else self.end_ns - self.bp_end_ns

    @property
    def data_aug_ns(self):
        """Data Aug Bound in ns or None."""
        return None if None in (self.fp_start_ns, self.prev_end_ns) else self.fp_start_ns - self.prev_end_ns


def iteration_of(model, iteration_id, ops, estimate_us=None):
    """Builds the ``Iteration`` of ``ops`` (one iteration's non-plumbing ``OpRun``s) in ``model``."""
    fp = [op.start_ns for op in ops if op.name == model.fp_point]
    bp = [op.end_ns for op in ops if op.name == model.bp_point]
    reduces = [(op.start_ns, op.end_ns - op.start_ns) for op in ops if op.kind == op_classes.HCCL]
    return Iteration(
        model.model_id,
        iteration_id,
        min(op.start_ns for op in ops),
        max(op.end_ns for op in ops),
        min(fp) if fp else None,
        max(bp) if bp else None,
        reduces,
        estimate_us,
    )


class StepTrace:
    """Collects iterations; ``rows`` computes the step trace once all runs are read."""

    def __init__(self):
        self._iterations = []

    def add(self, iteration):
        """Adds an ``Iteration``."""
        self._iterations.append(iteration)

    def rows(self, models):
        """The iterations of the step trace, in time order, with ``prev_end_ns`` filled in.

        Args:
          models: every ``Model``; the training ones are kept when there are any.
        Returns:
          A list of ``Iteration``.
        """
        training = {model.model_id for model in models if model.training}
        kept = [it for it in self._iterations if not training or it.model_id in training]
        previous = {}
        for iteration in kept:
            iteration.prev_end_ns = previous.get(iteration.model_id)
            previous[iteration.model_id] = iteration.end_ns
        return kept


def header(rows, with_estimate):
    """The step trace CSV header for ``rows``."""
    pairs = max((len(row.reduces) for row in rows), default=0)
    names = list(columns.STEP_TRACE)
    for k in range(1, pairs + 1):
        suffix = "" if k == 1 else f" {k}"
        names += [f"Reduce Start{suffix}(us)", f"Reduce Duration{suffix}(us)"]
    return names + [columns.STEP_TRACE_ESTIMATE] if with_estimate else names


def csv_row(row, device_id, pairs, with_estimate):
    """One step trace CSV row (``pairs`` Reduce column pairs)."""
    values = [
        device_id,
        row.iteration_id,
        us(row.fp_start_ns),
        us(row.bp_end_ns),
        us(row.end_ns),
        us(row.time_ns),
        us(row.fp_bp_ns),
        us(row.refresh_ns),
        us(row.data_aug_ns),
        row.model_id,
    ]
    for k in range(pairs):
        start, duration = row.reduces[k] if k < len(row.reduces) else (None, None)
        values += [us(start), us(duration)]
    if with_estimate:
        values.append(NA if row.estimate_us is None else f"{row.estimate_us:.3f}")
    return values


def us(ns):
    """ns -> the us text of Ascend's CSVs (3 decimals, exact: floats lose ns at epoch magnitudes), or N/A."""
    if ns is None:
        return NA
    ns = round(ns)
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    return f"{sign}{ns // 1000}.{ns % 1000:03d}"
