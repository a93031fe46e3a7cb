"""The report's SVG charts, laid out so that no two labels overlap.

A chart is drawn on a ``Canvas``, which keeps the box of every label and legend entry it draws: its width is
estimated from the text's length and font size, generously (a wide sans-serif font's digits), so a label a
browser renders fits in its box. ``Canvas.overlaps`` lists the boxes that touch each other or leave the canvas;
tests check it is empty, and labels that are nice to have (intermediate axis ticks) are drawn only where they fit
(``Canvas.text_if_free``).

``step_time_chart`` draws the step time per iteration: stacked bars of the measured parts on the left axis and,
on the simulated Ascend backend, the estimated Ascend 910 iteration time as a line on a right axis of its own (it
is orders of magnitude below the measured time, so on the bars' scale it would be a line on the floor).
"""

import dataclasses
import math
from typing import List, Optional, Tuple

from npu_bridge.core.runtime import inert_text

CHAR_WIDTH = 0.68  # em per character: DejaVu Sans, a common fallback, draws digits 0.64 em wide
_ASCENT, _DESCENT = 0.8, 0.25  # em above and below the baseline
_TEXT = "#1f2933"
_MUTED = "#616e7c"
COLORS = {
    "data_aug": "#9aa5b1",
    "fp_bp": "#3b82c4",
    "refresh": "#e8883a",
    "other": "#c7ced6",
    "estimate": "#2f8a3e",
}
PART_LABELS = (
    ("data_aug", "data aug bound"),
    ("fp_bp", "FP to BP"),
    ("refresh", "refresh"),
    ("other", "rest of iteration"),
)


@dataclasses.dataclass(frozen=True)
class Box:
    """A rectangle on the canvas (x0 < x1, y0 < y1, y down) and what is drawn there."""

    what: str
    x0: float
    y0: float
    x1: float
    y1: float

    def intersects(self, other):
        """True when the two boxes share more than an edge."""
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1


def text_width(text, size):
    """The estimated width of ``text`` at font ``size`` (px): at least what a browser draws."""
    return len(text) * size * CHAR_WIDTH


class Canvas:
    """An SVG image being drawn.

    Args:
      width, height: its size in px (the height may grow while drawing: ``height`` is read at ``svg``).
    """

    def __init__(self, width, height=0.0):
        self.width, self.height = width, height
        self.boxes: List[Box] = []
        self._parts = []

    def text(self, x, y, text, size=11, anchor="start", fill=_TEXT, bold=False):
        """Draws a label with its baseline at ``y``; ``anchor`` is start, middle or end. Returns its box."""
        box = _text_box(x, y, text, size, anchor)
        self.boxes.append(box)
        weight = " font-weight='bold'" if bold else ""
        self._parts.append(
            f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' fill='{fill}'{weight}>"
            f"{inert_text.html_text(text)}</text>"
        )
        return box

    def text_if_free(self, x, y, text, size=11, anchor="start", fill=_TEXT):
        """Draws a label only where it overlaps no other and stays on the canvas; returns whether it did."""
        box = _text_box(x, y, text, size, anchor)
        if not self._inside(box) or any(box.intersects(other) for other in self.boxes):
            return False
        self.text(x, y, text, size, anchor, fill)
        return True

    def rect(self, x, y, width, height, fill, title=None, keep_clear=None):
        """Draws a rectangle; ``keep_clear`` names it as a box no label may overlap (a legend swatch)."""
        if keep_clear:
            self.boxes.append(Box(keep_clear, x, y, x + width, y + height))
        tooltip = f"<title>{inert_text.html_text(title)}</title>" if title else ""
        self._parts.append(
            f"<rect x='{x:.2f}' y='{y:.2f}' width='{width:.2f}' height='{height:.2f}' fill='{fill}'>{tooltip}</rect>"
        )

    def line(self, x1, y1, x2, y2, stroke, width=1.0):
        """Draws a line."""
        self._parts.append(
            f"<line x1='{x1:.2f}' y1='{y1:.2f}' x2='{x2:.2f}' y2='{y2:.2f}' stroke='{stroke}' stroke-width='{width}'/>"
        )

    def polyline(self, points, stroke, width=2.0, title=None):
        """Draws a line through ``points`` [(x, y), ...]."""
        coordinates = " ".join(f"{x:.2f},{y:.2f}" for x, y in points)
        tooltip = f"<title>{inert_text.html_text(title)}</title>" if title else ""
        self._parts.append(
            f"<polyline points='{coordinates}' fill='none' stroke='{stroke}' stroke-width='{width}' "
            f"stroke-linejoin='round'>{tooltip}</polyline>"
        )

    def overlaps(self):
        """Descriptions of the labels and legend entries that overlap each other or leave the canvas."""
        found = [f"{box.what!r} leaves the canvas" for box in self.boxes if not self._inside(box)]
        for i, box in enumerate(self.boxes):
            found.extend(
                f"{box.what!r} overlaps {other.what!r}" for other in self.boxes[i + 1 :] if box.intersects(other)
            )
        return found

    def svg(self, label):
        """The SVG element, ``width`` px wide or narrower (scaled as a whole) on a narrow page; ``label`` is its
        accessible name."""
        return (
            f"<svg viewBox='0 0 {self.width:.0f} {self.height:.0f}' width='100%' "
            f"style='max-width:{self.width:.0f}px' role='img' aria-label='{inert_text.html_text(label)}'>"
            + "".join(self._parts)
            + "</svg>"
        )

    def _inside(self, box):
        return box.x0 >= 0 and box.y0 >= 0 and box.x1 <= self.width and box.y1 <= self.height


def _text_box(x, y, text, size, anchor):
    width = text_width(text, size)
    left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return Box(text, left, y - _ASCENT * size, left + width, y + _DESCENT * size)


@dataclasses.dataclass(frozen=True)
class Bar:
    """One bar of the step time chart: an iteration, or the average of a bucket of them (times in us).

    Attributes:
      iteration: the (first) iteration id.
      total: the iteration time.
      parts: ((part name, us), ...) stacked from the bottom, names as in ``COLORS``.
      estimate: the estimated Ascend 910 iteration time, None when not estimated.
    """

    iteration: int
    total: float
    parts: Tuple[Tuple[str, float], ...]
    estimate: Optional[float] = None


@dataclasses.dataclass(frozen=True)
class Scale:
    """A linear axis from 0 to ``ticks[-1]`` (in ``unit``), drawn over the plot height."""

    ticks: Tuple[float, ...]
    unit: str
    per_us: float  # axis units per us
    decimals: int

    @property
    def top_us(self):
        """The top of the axis in us."""
        return self.ticks[-1] / self.per_us

    def label(self, value):
        """The tick label of ``value`` (axis units)."""
        return f"{value:.{self.decimals}f}"


def nice_scale(top_us, intervals=4):
    """An axis from 0 to at least ``top_us`` in steps of 1, 2, 2.5 or 5 times a power of ten, in ms above 1 ms."""
    unit, per_us = ("ms", 1e-3) if top_us >= 1000 else ("µs", 1.0)
    top = max(top_us * per_us, 1e-9)
    magnitude = 10 ** math.floor(math.log10(top / intervals))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude * intervals >= top * (1 - 1e-9))
    count = max(1, math.ceil(top / step - 1e-9))
    decimals = 0
    while abs(round(step, decimals) - step) > step * 1e-6:
        decimals += 1
    return Scale(tuple(step * i for i in range(count + 1)), unit, per_us, decimals)


def step_time_chart(bars, steady_top_us, width=1000, plot_height=240):
    """Draws the step time per iteration.

    Args:
      bars: the ``Bar``s, in iteration order.
      steady_top_us: the largest steady iteration time: the left axis covers it, taller bars (a graph's first
        iteration) are cut at the top and marked.
      width: the chart width in px.
      plot_height: the height of the plotting area in px.
    Returns:
      (``Canvas``, [bars cut at the top]).
    """
    canvas = Canvas(width)
    estimates = [bar.estimate for bar in bars if bar.estimate]
    items = list(PART_LABELS)
    if estimates:
        items.append(("estimate", "estimated Ascend 910 (roofline), right axis"))
    legend_bottom = _legend(canvas, items, 0, 0, width)
    measured = nice_scale(steady_top_us or max((bar.total for bar in bars), default=0.0) or 1.0)
    estimate = nice_scale(max(estimates)) if estimates else None
    left = 10 + max(text_width(measured.label(t), 11) for t in measured.ticks)
    right = width - (10 + max(text_width(estimate.label(t), 11) for t in estimate.ticks) if estimate else 12)
    top = legend_bottom + 34  # the axis titles and the top tick labels sit between the legend and the plot
    bottom = top + plot_height
    canvas.text(0, top - 14, f"measured ({measured.unit})", size=11, fill=_MUTED)
    if estimate:
        canvas.text(width, top - 14, f"estimated ({estimate.unit})", size=11, anchor="end", fill=COLORS["estimate"])

    def y_of(value_us, scale):
        return bottom - plot_height * min(max(value_us, 0.0), scale.top_us) / scale.top_us

    for tick in measured.ticks:
        y = y_of(tick / measured.per_us, measured)
        canvas.line(left, y, right, y, "#e4e7eb")
        canvas.text(left - 6, y + 4, measured.label(tick), anchor="end")
    if estimate:
        for tick in estimate.ticks:
            y = y_of(tick / estimate.per_us, estimate)
            canvas.line(right, y, right + 4, y, COLORS["estimate"])
            canvas.text(right + 6, y + 4, estimate.label(tick), fill=COLORS["estimate"])
        canvas.line(right, top, right, bottom, COLORS["estimate"])
    pitch = (right - left) / max(len(bars), 1)
    cut = []
    for index, bar in enumerate(bars):
        x, y = left + index * pitch, bottom
        for name, value in bar.parts:
            height = min(plot_height * max(value, 0.0) / measured.top_us, y - top)
            y -= height
            canvas.rect(
                x,
                y,
                max(pitch - 1, 0.5),
                height,
                COLORS[name],
                f"iteration {bar.iteration}: {name} {value / 1000:.3f} ms",
            )
        if bar.total > measured.top_us:
            cut.append(bar)
            for offset in (5, 9):  # a break mark: the bar goes on above the chart
                canvas.line(x, top + offset, x + max(pitch - 1, 0.5), top + offset - 2, "#ffffff", 1.5)
    if estimate:
        _estimate_line(canvas, bars, left, pitch, lambda value: y_of(value, estimate))
    canvas.line(left, bottom, right, bottom, "#9aa5b1")
    canvas.height = bottom + 22
    _iteration_labels(canvas, bars, left, pitch, bottom + 16)
    return canvas, cut


def _legend(canvas, items, x, y, width):
    """Draws legend entries left to right from (x, y), wrapping at ``width``; returns the bottom of the legend."""
    size, row_height, left = 12, 18, x
    for name, label in items:
        entry = 14 + text_width(label, size)
        if x > left and x + entry > width:
            x, y = left, y + row_height
        canvas.rect(x, y + 3, 10, 10, COLORS[name], keep_clear=f"legend swatch {label}")
        canvas.text(x + 14, y + 12, label, size=size)
        x += entry + 16
    return y + row_height


def _estimate_line(canvas, bars, left, pitch, y_of):
    """The estimate as a step line across each bar, broken where a bar has no estimate."""
    segment = []
    for index, bar in enumerate(bars + [None]):
        if bar is None or not bar.estimate:
            if segment:
                canvas.polyline(segment, COLORS["estimate"], title="estimated Ascend 910 iteration time")
            segment = []
            continue
        y = y_of(bar.estimate)
        segment += [(left + index * pitch, y), (left + (index + 1) * pitch, y)]


def _iteration_labels(canvas, bars, left, pitch, y):
    """Iteration ids under the bars: the first and the last, and round ones in between where they fit."""
    if not bars:
        return
    canvas.text(left, y, f"iteration {bars[0].iteration}")
    if len(bars) > 1:
        canvas.text(left + len(bars) * pitch, y, f"iteration {bars[-1].iteration}", anchor="end")
    span = bars[-1].iteration - bars[0].iteration
    if span < 2:
        return
    power = 10 ** math.floor(math.log10(span))
    step = next(round(m * power) for m in (0.1, 0.2, 0.5, 1) if m * power >= 1 and span / (m * power) <= 10)
    for index in range(1, len(bars) - 1):
        first, following = bars[index].iteration, bars[index + 1].iteration
        round_id = -(-first // step) * step  # the first multiple of step in this bar's iterations
        if round_id < following:
            canvas.text_if_free(left + (index + 0.5) * pitch, y, str(round_id), anchor="middle", fill=_MUTED)
