"""``scipy.integrate``'s ``simps``, ``trapz`` and ``cumtrapz``, which SciPy 1.14 removed, for ``--py-compat``.

``trapz`` and ``cumtrapz`` are ``trapezoid`` and ``cumulative_trapezoid`` under their old names. ``simps`` keeps the
SciPy of the scripts' era (up to 1.10): for an even number of samples its default ``even="avg"`` averaged Simpson's
rule over the first N-1 samples plus a trapezoid on the last interval with the mirror image of that, where today's
``simpson`` applies another correction, so the two differ there.
"""

import numpy as np

from npu_bridge.core.runtime.errors import NpuArgumentError

EVEN = ("avg", "first", "last", "simpson")


def simps(y, x=None, dx=1.0, axis=-1, even="avg"):
    """Simpson's rule as SciPy 1.10's ``simps`` integrated ``y`` (over ``x``, or samples ``dx`` apart).

    Raises:
      NpuArgumentError: ``even`` is not one of "avg", "first", "last", "simpson".
    """
    from scipy.integrate import simpson, trapezoid

    if even not in EVEN:
        raise NpuArgumentError(f"scipy.integrate.simps: even={even!r} must be one of {', '.join(EVEN)}")
    y = np.asarray(y)
    count = y.shape[axis]
    if count % 2 or even == "simpson":
        return simpson(y, x=x, dx=dx, axis=axis) if count > 1 else np.zeros_like(np.sum(y, axis=axis), dtype=float)

    def part(values, start, stop, rule):
        points = np.take(values, range(start, stop), axis=axis)
        if x is None:
            return rule(points, dx=dx, axis=axis)
        spots = np.asarray(x)
        spots = np.take(spots, range(start, stop), axis=axis if spots.ndim > 1 else -1)
        return rule(points, x=spots, axis=axis)

    def odd_simpson(start, stop):
        return part(y, start, stop, simpson) if stop - start > 1 else 0.0

    first = odd_simpson(0, count - 1) + part(y, count - 2, count, trapezoid)
    last = part(y, 0, 2, trapezoid) + odd_simpson(1, count)
    return {"first": first, "last": last, "avg": (first + last) / 2}[even]


def names():
    """{old name: (function, what to write instead)} for ``scipy.integrate``."""
    from scipy.integrate import cumulative_trapezoid, trapezoid

    return {
        "simps": (simps, "scipy.integrate.simpson (its result differs for an even number of samples)"),
        "trapz": (trapezoid, "scipy.integrate.trapezoid"),
        "cumtrapz": (cumulative_trapezoid, "scipy.integrate.cumulative_trapezoid"),
    }
