"""The metrics of Ascend's comparison result CSV, from the pair statistics of two tensors (``tensor_stats``).

The definitions are in ``dump_compare``'s docstring.
"""

import math

import numpy as np

ALGORITHMS = (
    "CosineSimilarity",
    "MaxAbsoluteError",
    "AccumulatedRelativeError",
    "RelativeEuclideanDistance",
    "KullbackLeiblerDivergence",
    "StandardDeviation",
    "MeanAbsoluteError",
    "RootMeanSquareError",
    "MaxRelativeError",
    "MeanRelativeError",
)
HISTOGRAM_BINS = 100


def metrics(pairs):
    """The metrics (module docstring) from a ``tensor_stats.PairStatistics``."""
    if not pairs.count:
        nan = float("nan")
        return {name: nan for name in ALGORITHMS if name != "StandardDeviation"} | {"StandardDeviation": ""}
    norm_x, norm_y = math.sqrt(pairs.xx), math.sqrt(pairs.yy)
    if norm_x == 0 and norm_y == 0:
        cosine = 1.0
    elif norm_x == 0 or norm_y == 0:
        cosine = 0.0
    else:
        cosine = pairs.dot / (norm_x * norm_y)
    x, y = pairs.x, pairs.y
    return {
        "CosineSimilarity": cosine,
        "MaxAbsoluteError": pairs.diff_max,
        "AccumulatedRelativeError": _ratio(pairs.diff_sum, pairs.abs_y),
        "RelativeEuclideanDistance": _ratio(math.sqrt(pairs.squared_diff), norm_y),
        "KullbackLeiblerDivergence": _kl_divergence(pairs.histograms),
        "StandardDeviation": f"({x.mean:.6g};{x.std:.6g}),({y.mean:.6g};{y.std:.6g})",
        "MeanAbsoluteError": pairs.diff_sum / pairs.count,
        "RootMeanSquareError": math.sqrt(pairs.squared_diff / pairs.count),
        "MaxRelativeError": pairs.relative_max,
        "MeanRelativeError": pairs.relative_sum / pairs.count,
    }


def _ratio(numerator, denominator):
    if denominator == 0:
        return 0.0 if numerator == 0 else float("inf")
    return numerator / denominator


def _kl_divergence(histograms):
    """KL(p || q) of the two value histograms (None: every value is the same, 0)."""
    if histograms is None:
        return 0.0
    p, q = histograms
    p = (p + 1e-10) / (p.sum() + 1e-10 * HISTOGRAM_BINS)
    q = (q + 1e-10) / (q.sum() + 1e-10 * HISTOGRAM_BINS)
    return float(np.sum(p * np.log(p / q)))
