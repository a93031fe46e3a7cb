"""A self-contained HTML report of one or more profiles (ranks): inline SVG charts, no scripts, no downloads.

Per rank: the headline numbers, step time per iteration as stacked bars (data aug bound, FP to BP, refresh),
the op types that take the most time, and the graphs that ran with their training-trace points. Several ranks
get a comparison table first.
"""

import html
import os

from npu_bridge.core.profiling import layout
from npu_bridge.core.profiling.summary import format_ms

_MAX_BARS = 600
_COLORS = {"data_aug": "#9aa5b1", "fp_bp": "#3b82c4", "refresh": "#e8883a", "other": "#c7ced6", "estimate": "#5aa469"}
_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1f2933;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #d9e2ec}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid #e4e7eb;
text-align:right}th{background:#f0f4f8}td.l,th.l{text-align:left}.note{color:#616e7c;font-size:12px}
.kpi{display:inline-block;margin:6px 18px 6px 0}.kpi b{font-size:20px;display:block}
.legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
"""


def write_report(summaries, path):
    """Writes the HTML report.

    Args:
      summaries: ``summary.ProfileSummary`` objects, one per rank.
      path: the HTML file to write.
    Returns:
      ``path``.
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
        "out as Ascend's profile. Estimated Ascend values come from a roofline model; see README.md, "
        "section Profiling.</p></body></html>"
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(parts))
    return path


def _rank_table(summaries):
    rows = []
    means = [s.mean("iteration_time") for s in summaries]
    slowest = max((m for m in means if m is not None), default=None)
    for summary, mean in zip(summaries, means):
        info = summary.info
        mark = " (slowest)" if mean is not None and mean == slowest else ""
        rows.append(
            f"<tr><td>{info['rank_id']}</td><td>{info['device_id']}</td><td>{format_ms(mean)}{mark}</td>"
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
    timeline = info.get("exported", {}).get("timeline")
    link = ""
    if timeline:
        target = os.path.relpath(os.path.join(summary.directory, timeline), report_dir)
        link = (
            f"<p>Timeline: <a href='{html.escape(target)}'>{html.escape(os.path.basename(timeline))}</a> "
            "(open it in https://ui.perfetto.dev or chrome://tracing)</p>"
        )
    return (
        f"<h2>Rank {info['rank_id']} &middot; device {info['device_id']} &middot; {html.escape(info['backend'])}"
        f" backend</h2><p class='note'>{html.escape(summary.directory)}</p>"
        + "".join(f"<div class='kpi'><b>{html.escape(v)}</b>{html.escape(k)}</div>" for k, v in kpis)
        + link
        + _iteration_chart(summary)
        + _op_chart(summary)
        + _models_table(info)
    )


def _iteration_chart(summary):
    rows = summary.iterations
    if not rows:
        return "<h3>Step time per iteration</h3><p>No step trace: profiling_options training_trace was off.</p>"
    steady = [row.iteration_time or 0.0 for row in summary.steady_iterations]
    step = max(1, -(-len(rows) // _MAX_BARS))
    buckets = [rows[i : i + step] for i in range(0, len(rows), step)]
    width, height, left, bottom = 1000, 260, 60, 30
    values = []
    for bucket in buckets:

        def avg(field, bucket=bucket):
            known = [getattr(r, field) for r in bucket if getattr(r, field) is not None]
            return sum(known) / len(known) if known else 0.0

        total = avg("iteration_time")
        parts = [("data_aug", avg("data_aug")), ("fp_bp", avg("fp_bp")), ("refresh", avg("refresh"))]
        used = sum(max(v, 0.0) for _, v in parts)
        parts.append(("other", max(total - used, 0.0)))
        values.append((bucket[0].iteration_id, max(total, used), parts, avg("estimate")))
    # The scale follows the steady iterations; a taller first iteration (graph optimization) is cut at the top.
    top = max(steady, default=0.0) or max(v[1] for v in values) or 1.0
    bar = (width - left) / len(values)
    svg = [f"<svg width='{width}' height='{height + bottom}' role='img'>"]
    for tick in range(5):
        y = height - height * tick / 4
        svg.append(
            f"<line x1='{left}' x2='{width}' y1='{y:.1f}' y2='{y:.1f}' stroke='#e4e7eb'/>"
            f"<text x='{left - 6}' y='{y + 4:.1f}' font-size='11' text-anchor='end'>"
            f"{top * tick / 4 / 1000:.2f} ms</text>"
        )
    for index, (iteration, total, parts, est) in enumerate(values):
        x, y = left + index * bar, float(height)
        for name, value in parts:
            h = min(height * max(value, 0.0) / top, y)
            y -= h
            svg.append(
                f"<rect x='{x:.2f}' y='{y:.2f}' width='{max(bar - 1, 0.5):.2f}' height='{h:.2f}' "
                f"fill='{_COLORS[name]}'><title>iteration {iteration}: {name} {value / 1000:.3f} ms"
                f"</title></rect>"
            )
        if total > top:
            svg.append(
                f"<text x='{x + bar / 2:.2f}' y='10' font-size='10' text-anchor='middle'>{total / 1000:.1f} ms</text>"
            )
        if est:
            ey = height - height * min(est, top) / top
            svg.append(
                f"<line x1='{x:.2f}' x2='{x + bar:.2f}' y1='{ey:.2f}' y2='{ey:.2f}' "
                f"stroke='{_COLORS['estimate']}' stroke-width='2'/>"
            )
    svg.append(
        f"<text x='{left}' y='{height + 20}' font-size='11'>iteration {values[0][0]}</text>"
        f"<text x='{width}' y='{height + 20}' font-size='11' text-anchor='end'>iteration "
        f"{values[-1][0]}</text></svg>"
    )
    legend = "".join(
        f"<span style='background:{_COLORS[k]}'></span>{label}"
        for k, label in (
            ("data_aug", "data aug bound"),
            ("fp_bp", "FP to BP"),
            ("refresh", "refresh"),
            ("other", "rest of iteration"),
        )
    )
    if any(v[3] for v in values):
        legend += f"<span style='background:{_COLORS['estimate']}'></span>estimated Ascend 910 (roofline)"
    note = f" (each bar averages {step} iterations)" if step > 1 else ""
    return f"<h3>Step time per iteration{note}</h3><div class='legend'>{legend}</div>" + "".join(svg)


def _op_chart(summary, top=15):
    rows = summary.op_types[:top]
    if not rows:
        return "<h3>Top op types</h3><p>No op data: profiling_options task_time was off.</p>"
    with_estimate = any(row.estimate_us is not None for row in rows)
    peak = max(row.total_us for row in rows) or 1.0
    lines = []
    for row in rows:
        width = 420 * row.total_us / peak
        bar = f"<svg width='430' height='14'><rect width='{width:.1f}' height='12' fill='{_COLORS['fp_bp']}'/></svg>"
        estimate = f"<td>{row.estimate_us:.3f}</td>" if with_estimate else ""
        lines.append(
            f"<tr><td class='l'>{html.escape(row.op_type)}</td><td class='l'>{html.escape(row.core_type)}"
            f"</td><td>{row.count}</td><td>{row.total_us:.3f}</td><td>{row.ratio:.2f}</td>{estimate}"
            f"<td class='l'>{bar}</td></tr>"
        )
    head = "<th>estimated Ascend total (us)</th>" if with_estimate else ""
    return (
        "<h3>Top op types by total time</h3><table><tr><th class='l'>OP Type</th><th class='l'>Core Type</th>"
        f"<th>count</th><th>total (us)</th><th>ratio (%)</th>{head}<th></th></tr>" + "".join(lines) + "</table>"
    )


def _models_table(info):
    models = info.get("models", [])
    if not models:
        return ""
    rows = "".join(
        f"<tr><td>{m['model_id']}</td><td>{'yes' if m['training'] else 'no'}</td><td>{m['runs']}</td>"
        f"<td>{m['iterations']}</td><td class='l'>{_point(m['fp_point'], m['fp_point_source'])}</td>"
        f"<td class='l'>{_point(m['bp_point'], m['bp_point_source'])}</td>"
        f"<td class='l'>{html.escape(', '.join(m['fetched'][:4]))}</td></tr>"
        for m in models
    )
    return (
        "<h3>Graphs</h3><table><tr><th>model</th><th>training</th><th>runs</th><th>iterations</th>"
        "<th class='l'>FP point</th><th class='l'>BP point</th><th class='l'>fetched</th></tr>" + rows + "</table>"
    )


def _point(name, source):
    return "&ndash;" if name is None else f"{html.escape(name)} ({source})"


def report_path(profile_dir):
    """The default report file of a profile directory."""
    return os.path.join(profile_dir, layout.REPORT_FILE)
