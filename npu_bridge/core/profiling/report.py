"""A self-contained HTML report of one or more profiles (ranks): inline SVG charts, no scripts, no downloads.

The report is inert: every value that comes from a file (info.json, the exported CSVs, directory names) is
escaped (``_text``: ``inert_text.html_text``, control characters as visible escapes, then ``html.escape`` for text
and attribute values, which are always quoted), the timeline link is a
percent-encoded relative URL to a file inside the profile (so a name such as ``javascript:...`` stays a file name),
and the page holds no ``<script>`` (data put into one would have to be JSON with ``<``, ``>`` and ``&`` written as
``\\u003c``, ``\\u003e``, ``\\u0026``).

Per rank: the headline numbers, step time per iteration as stacked bars (data aug bound, FP to BP, refresh) with
the estimated Ascend 910 time on an axis of its own (``charts``), the op types that take the most time -- without
the warm-up unless the summary kept it, by TensorFlow op type and Ascend OP Type -- and the graphs that ran with
their training-trace points. Several ranks get a comparison table first.
"""

import html
import os
import re
import urllib.parse

from npu_bridge.core.profiling import charts, layout
from npu_bridge.core.profiling.summary import format_ms, warmup_text
from npu_bridge.core.runtime import atomic_write, inert_text, safe_paths

_MAX_BARS = 600
_MAX_CUT_LISTED = 8
_OP_BAR = 240  # px: the longest bar of the op table
_COLORS = charts.COLORS
_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1f2933;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #d9e2ec}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0;font-size:13px;max-width:100%}
td,th{padding:3px 10px;border-bottom:1px solid #e4e7eb;text-align:right}th{background:#f0f4f8}
td.l,th.l{text-align:left}td.path{overflow-wrap:anywhere}
code{font-size:11px;white-space:nowrap}
.note{color:#616e7c;font-size:12px}.kpi{display:inline-block;margin:6px 18px 6px 0}.kpi b{font-size:20px;display:block}
svg{display:block}td svg{display:inline-block;vertical-align:middle}
"""


def write_report(summaries, path):
    """Writes the HTML report.

    Args:
      summaries: ``summary.ProfileSummary`` objects, one per rank.
      path: the HTML file to write.
    Returns:
      ``path``.
    Raises:
      OutputFileError: ``path`` is not a regular file (a FIFO, a device, a directory) or cannot be written.
    """
    parts = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>npu_bridge profile</title>"
        f"<style>{_STYLE}</style></head><body><h1>npu_bridge profile</h1>"
    ]
    if len(summaries) > 1:
        parts.append(_rank_table(summaries))
    for summary in summaries:
        parts.append(_profile_section(summary, os.path.dirname(os.path.abspath(path))))
    parts.append(
        "<p class='note'>Times are TensorFlow op times on this machine (TensorFlow step stats), laid "
        "out as Ascend's profile. Estimated Ascend values come from a roofline model; see "
        "docs/profiling.md, section Simulated Ascend time.</p></body></html>"
    )
    atomic_write.write_output(path, "".join(parts), "report")
    return path


def _rank_table(summaries):
    rows = []
    means = [s.mean("iteration_time") for s in summaries]
    slowest = max((m for m in means if m is not None), default=None)
    for summary, mean in zip(summaries, means):
        info = summary.info
        mark = " (slowest)" if mean is not None and mean == slowest else ""
        rows.append(
            f"<tr><td>{_text(info['rank_id'])}</td><td>{_text(info['device_id'])}</td><td>{format_ms(mean)}{mark}</td>"
            f"<td>{format_ms(summary.mean('fp_bp'))}</td><td>{format_ms(summary.mean('refresh'))}</td>"
            f"<td>{format_ms(summary.mean('data_aug'))}</td><td>{len(summary.iterations)}</td></tr>"
        )
    return (
        "<h2>Ranks</h2><table><tr><th>rank</th><th>device</th><th>mean iteration</th><th>FP to BP</th>"
        "<th>refresh</th><th>data aug bound</th><th>iterations</th></tr>" + "".join(rows) + "</table>"
    )


def _profile_section(summary, report_dir):
    info = summary.info
    mean = summary.mean("iteration_time")
    kpis = [
        ("iterations", str(len(summary.iterations))),
        ("mean iteration", format_ms(mean)),
        ("FP to BP", format_ms(summary.mean("fp_bp"))),
        ("refresh", format_ms(summary.mean("refresh"))),
        ("data aug bound", format_ms(summary.mean("data_aug"))),
    ]
    estimate = summary.mean("estimate")
    if estimate is not None:
        kpis.append(("estimated Ascend 910 / iteration", format_ms(estimate)))
    timeline = (info.get("exported") or {}).get("timeline")
    link = ""
    if timeline:
        path = safe_paths.inside(summary.directory, timeline, os.path.join(summary.directory, layout.INFO_FILE))
        target = os.path.relpath(path, report_dir)
        link = (
            f"<p>Timeline: <a href='{_url(target)}'>{_text(os.path.basename(timeline))}</a> "
            "(open it in https://ui.perfetto.dev or chrome://tracing)</p>"
        )
    steady = ""
    left_out = len(summary.iterations) - len(summary.steady_iterations)
    if left_out:
        steady = (
            f"<p class='note'>Means over {len(summary.steady_iterations)} iterations: the first iteration of each "
            f"graph that ran more than once is warm-up and left out ({left_out} iteration"
            f"{'' if left_out == 1 else 's'}).</p>"
        )
    return (
        f"<h2>Rank {_text(info['rank_id'])} &middot; device {_text(info['device_id'])} &middot; "
        f"{_text(info['backend'])} backend</h2><p class='note'>{_text(summary.directory)}</p>"
        + "".join(f"<div class='kpi'><b>{_text(v)}</b>{_text(k)}</div>" for k, v in kpis)
        + steady
        + link
        + _iteration_chart(summary)
        + _op_chart(summary)
        + _models_table(info)
    )


def step_time_canvas(summary):
    """The step time chart of a profile with step trace rows.

    Returns:
      (``charts.Canvas``, its bars, the bars cut at the top, iterations per bar).
    """
    rows = summary.iterations
    steady = [row.iteration_time or 0.0 for row in summary.steady_iterations]
    step = max(1, -(-len(rows) // _MAX_BARS))
    bars = [_bar(rows[i : i + step]) for i in range(0, len(rows), step)]
    # The scale follows the steady iterations; a taller first iteration (graph optimization) is cut at the top.
    canvas, cut = charts.step_time_chart(bars, max(steady, default=0.0))
    return canvas, bars, cut, step


def _iteration_chart(summary):
    if not summary.iterations:
        return "<h3>Step time per iteration</h3><p>No step trace: profiling_options training_trace was off.</p>"
    canvas, bars, cut, step = step_time_canvas(summary)
    notes = []
    if cut:
        listed = ", ".join(f"iteration {bar.iteration}: {format_ms(bar.total)}" for bar in cut[:_MAX_CUT_LISTED])
        more = f" and {len(cut) - _MAX_CUT_LISTED} more" if len(cut) > _MAX_CUT_LISTED else ""
        notes.append(f"Bars cut at the top (the scale follows the steady iterations): {listed}{more}.")
    estimates = [bar.estimate for bar in bars if bar.estimate]
    if estimates:
        measured = summary.mean("iteration_time")
        estimate = summary.mean("estimate")
        ratio = f", {measured / estimate:,.0f} times less than measured here" if measured and estimate else ""
        notes.append(
            "The green line is the estimated Ascend 910 iteration time (the roofline sum of the iteration's AI_CORE "
            f"ops) on its own scale, the right axis: {format_ms(estimate)} per iteration{ratio}."
        )
    note = f" (each bar averages {step} iterations)" if step > 1 else ""
    return (
        f"<h3>Step time per iteration{note}</h3>"
        + canvas.svg("step time per iteration")
        + "".join(f"<p class='note'>{html.escape(text)}</p>" for text in notes)
    )


def _bar(bucket):
    """The ``charts.Bar`` of a bucket of step trace rows: their averages."""

    def avg(field):
        known = [getattr(r, field) for r in bucket if getattr(r, field) is not None]
        return sum(known) / len(known) if known else 0.0

    total = avg("iteration_time")
    parts = [("data_aug", avg("data_aug")), ("fp_bp", avg("fp_bp")), ("refresh", avg("refresh"))]
    used = sum(max(v, 0.0) for _, v in parts)
    parts.append(("other", max(total - used, 0.0)))
    return charts.Bar(bucket[0].iteration_id, max(total, used), tuple(parts), avg("estimate") or None)


def _op_chart(summary, top=15):
    rows = summary.op_types[:top]
    if not rows:
        return "<h3>Top op types</h3><p>No op data: profiling_options task_time was off.</p>"
    with_estimate = any(row.estimate_us is not None for row in rows)
    peak = max(row.total_us for row in rows) or 1.0
    peak_estimate = max((row.estimate_us or 0.0 for row in rows), default=0.0) or 1.0
    lines = []
    for row in rows:
        bar = f"<rect width='{_OP_BAR * row.total_us / peak:.1f}' height='9' fill='{_COLORS['fp_bp']}'/>"
        estimate = ""
        if with_estimate:
            estimate = "<td>N/A</td>" if row.estimate_us is None else f"<td>{row.estimate_us:.3f}</td>"
            bar += (
                f"<rect y='11' width='{_OP_BAR * (row.estimate_us or 0.0) / peak_estimate:.1f}' height='5' "
                f"fill='{_COLORS['estimate']}'/>"
            )
        height = 16 if with_estimate else 9
        lines.append(
            f"<tr><td class='l'>{_breakable(row.tf_op_type or row.op_type)}</td>"
            f"<td class='l'>{_breakable(row.op_type)}</td><td class='l'>{_text(row.core_type)}</td>"
            f"<td>{_text(row.count)}</td><td>{row.total_us:.3f}</td><td>{row.ratio:.2f}</td>{estimate}"
            f"<td class='l'><svg width='{_OP_BAR}' height='{height}'>{bar}</svg></td></tr>"
        )
    head = "<th>estimated Ascend total (us)</th>" if with_estimate else ""
    scale = (
        f"Bars: measured total (blue, the longest is {format_ms(peak)}) and estimated Ascend 910 total (green, on "
        f"its own scale: the longest is {format_ms(peak_estimate)})."
        if with_estimate
        else ""
    )
    return (
        f"<h3>Top op types by total time</h3><p class='note'>{_with_code(warmup_text(summary.warmup))}</p>"
        + (f"<p class='note'>{html.escape(scale)}</p>" if scale else "")
        + "<table><tr><th class='l'>TensorFlow op type</th><th class='l'>OP Type (Ascend)</th>"
        f"<th class='l'>Core Type</th><th>count</th><th>total (us)</th><th>ratio (%)</th>{head}<th></th></tr>"
        + "".join(lines)
        + "</table>"
    )


def _breakable(name):
    """An op type in HTML that may wrap between the words of its CamelCase name (SparseSoftmax|CrossEntropy...)."""
    return re.sub(r"(?<=[A-Za-z0-9])(?=[A-Z][a-z])", "<wbr>", _text(name))


def _with_code(text):
    """``text`` in HTML with its command-line flags as code (kept on one line)."""
    return re.sub(r"(--[a-z][a-z-]*)", r"<code>\1</code>", html.escape(text))


def _models_table(info):
    models = info.get("models", [])
    if not models:
        return ""
    rows = "".join(
        f"<tr><td>{_text(m['model_id'])}</td><td>{'yes' if m['training'] else 'no'}</td><td>{_text(m['runs'])}</td>"
        f"<td>{_text(m['iterations'])}</td><td class='l path'>{_point(m['fp_point'], m['fp_point_source'])}</td>"
        f"<td class='l path'>{_point(m['bp_point'], m['bp_point_source'])}</td>"
        f"<td class='l path'>{_text(', '.join(m['fetched'][:4]))}</td></tr>"
        for m in models
    )
    return (
        "<h3>Graphs</h3><table><tr><th>model</th><th>training</th><th>runs</th><th>iterations</th>"
        "<th class='l'>FP point</th><th class='l'>BP point</th><th class='l'>fetched</th></tr>" + rows + "</table>"
    )


def _point(name, source):
    return "&ndash;" if name is None else f"{_text(name)} ({_text(source)})"


def _text(value):
    """A value from a file as HTML text or a (quoted) attribute value: control characters as visible escapes, then
    ``&``, ``<``, ``>``, ``"`` and ``'`` escaped."""
    return inert_text.html_text(value)


def _url(relative_path):
    """A relative file path as an ``href`` value: percent-encoded (no ``:`` survives, so it cannot be read as a
    ``javascript:`` or other scheme), then escaped for the attribute."""
    return _text(urllib.parse.quote(relative_path.replace(os.sep, "/"), safe="/"))


def report_path(profile_dir):
    """The default report file of a profile directory."""
    return os.path.join(profile_dir, layout.REPORT_FILE)
