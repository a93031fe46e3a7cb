"""Statistics of dumped tensors, computed block by block (``TensorData.value_blocks``) so that memory stays within
a few blocks whatever the size of the tensor: ``npu-dump info`` and the overflow report (min, max, mean, NaN and
inf counts) and ``npu-dump compare`` (``PairStatistics``: the sums its metrics are made of)."""

import dataclasses
import math

import numpy as np


@dataclasses.dataclass
class Moments:
    """Count, mean and sum of squared deviations of values, merged block by block (Chan et al.)."""

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def add(self, values):
        """Merges the float64 ``values`` in."""
        if not values.size:
            return
        block_mean = float(values.mean())
        block_m2 = float(np.square(values - block_mean).sum())
        total = self.count + values.size
        delta = block_mean - self.mean
        self.m2 += block_m2 + delta * delta * self.count * values.size / total
        self.mean += delta * values.size / total
        self.count = total

    @property
    def std(self):
        """The population standard deviation (NaN without values)."""
        return math.sqrt(self.m2 / self.count) if self.count else float("nan")


@dataclasses.dataclass
class Summary:
    """What ``summarize`` found: min, max and mean of the finite values (NaN when none), NaN and inf counts."""

    size: int = 0
    minimum: float = float("nan")
    maximum: float = float("nan")
    moments: Moments = dataclasses.field(default_factory=Moments)
    nan: int = 0
    inf: int = 0

    @property
    def mean(self):
        """The mean of the finite values (NaN when none)."""
        return self.moments.mean if self.moments.count else float("nan")


def summarize(tensor):
    """Returns the ``Summary`` of a tensor with real numeric values, or None for other types (strings, complex).

    Raises:
      DumpFormatError: the bytes do not fit the shape (``TensorData.value_blocks``).
    """
    dtype = tensor.numpy_dtype()
    if dtype is None or dtype.kind not in "fiub":
        return None
    found = Summary()
    for block in tensor.value_blocks():
        values = block.astype(np.float64)
        finite = values[np.isfinite(values)]
        found.size += values.size
        found.nan += int(np.isnan(values).sum())
        found.inf += int(np.isinf(values).sum())
        if finite.size:
            found.minimum = float(np.fmin(found.minimum, finite.min()))
            found.maximum = float(np.fmax(found.maximum, finite.max()))
            found.moments.add(finite)
    return found


@dataclasses.dataclass
class PairStatistics:
    """Sums over the positions where two tensors of the same size both hold finite values (x mine, y the truth).

    Attributes:
      identical: bit-for-bit equal, NaNs equal (given equal dtypes).
      special_differs: positions where inf/NaN differ.
      overflow: x holds inf/NaN, or (fp16) values at 65504.
      count, dot, xx, yy, abs_y, diff_sum, diff_max, squared_diff, relative_sum, relative_max: the sums and maxima.
      low, high: the range of x and y at those positions.
      x, y: their ``Moments``.
      histograms: the 100-bin histograms of x and y over [low, high] (a second pass; None until then).
    """

    identical: bool = True
    special_differs: int = 0
    overflow: bool = False
    count: int = 0
    dot: float = 0.0
    xx: float = 0.0
    yy: float = 0.0
    abs_y: float = 0.0
    diff_sum: float = 0.0
    diff_max: float = 0.0
    squared_diff: float = 0.0
    relative_sum: float = 0.0
    relative_max: float = 0.0
    low: float = float("inf")
    high: float = float("-inf")
    x: Moments = dataclasses.field(default_factory=Moments)
    y: Moments = dataclasses.field(default_factory=Moments)
    histograms: tuple = None


def compare_pairs(mine, truth, relative_floor, overflows, bins):
    """Returns the ``PairStatistics`` of two tensors of the same size and real dtypes, in two passes.

    Args:
      mine, truth: ``TensorData``.
      relative_floor: the smallest |y| a relative error divides by.
      overflows: callable(block of mine) -> whether it overflows.
      bins: histogram bins for the second pass.
    """
    found = PairStatistics()
    for a, b in zip(mine.value_blocks(), truth.value_blocks()):
        found.overflow = found.overflow or overflows(a)
        _add_pair(found, a.astype(np.float64), b.astype(np.float64), relative_floor)
    if found.count and found.low < found.high:
        p, q = np.zeros(bins), np.zeros(bins)
        for a, b in zip(mine.value_blocks(), truth.value_blocks()):
            x, y = a.astype(np.float64), b.astype(np.float64)
            both = np.isfinite(x) & np.isfinite(y)
            p += np.histogram(x[both], bins=bins, range=(found.low, found.high))[0]
            q += np.histogram(y[both], bins=bins, range=(found.low, found.high))[0]
        found.histograms = (p, q)
    return found


def _add_pair(found, x, y, relative_floor):
    found.identical = found.identical and np.array_equal(x, y, equal_nan=True)
    finite_x, finite_y = np.isfinite(x), np.isfinite(y)
    both = finite_x & finite_y
    same_special = (x == y) | (np.isnan(x) & np.isnan(y))
    found.special_differs += int(np.sum((~finite_x | ~finite_y) & ~same_special))
    x, y = x[both], y[both]
    if not x.size:
        return
    diff = np.abs(x - y)
    relative = diff / np.maximum(np.abs(y), relative_floor)
    found.count += x.size
    found.dot += float(np.dot(x, y))
    found.xx += float(np.dot(x, x))
    found.yy += float(np.dot(y, y))
    found.abs_y += float(np.abs(y).sum())
    found.diff_sum += float(diff.sum())
    found.diff_max = max(found.diff_max, float(diff.max()))
    found.squared_diff += float(np.dot(diff, diff))
    found.relative_sum += float(relative.sum())
    found.relative_max = max(found.relative_max, float(relative.max()))
    found.low = min(found.low, float(x.min()), float(y.min()))
    found.high = max(found.high, float(x.max()), float(y.max()))
    found.x.add(x)
    found.y.add(y)
