"""``npu-dump compare --html``: the comparison as one self-contained page a person reads in a browser.

The page holds the configuration check, the counts, the advisor line (``compare_advice``), the ops that introduce
error (``error_origin``) and, with ``--isolate``, their reruns; then every compared tensor in execution order,
coloured by its relative error, with a search box (op name, type or source line) and filters (op type, differing,
diverged, introducing). The op the advisor looks at (the first that introduces error on the way to the first
diverging op), its rows and its source line are highlighted.

It downloads nothing and is inert: every value from a file is escaped (``inert_text.html_text``) into quoted
attributes and text, the one script reads only ``data-`` attributes and toggles ``hidden``, and a
Content-Security-Policy allows that script alone (by its hash) and no request of any kind.
"""

import base64
import hashlib
import math

from npu_bridge.core.dump import error_origin, run_config
from npu_bridge.core.runtime import atomic_write, inert_text

# Upper bounds of the colour classes e1..e3 over the relative error |a - b| / |b|; above: e4 (so is a diverged tensor).
ERROR_CLASSES = (1e-6, 1e-4, 1e-2)
_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1f2933}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #d9e2ec}
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #e4e7eb;text-align:left}
th{background:#f0f4f8;position:sticky;top:0}td.n{text-align:right;font-variant-numeric:tabular-nums}
td.src{overflow-wrap:anywhere;max-width:420px}code{font-size:12px}
.e0{background:#f5f7fa}.e1{background:#e3f9e5}.e2{background:#fffbea}.e3{background:#ffe8d9}
.e4{background:#ffd0d0}tr.na{color:#7b8794}
tr.first td{border-top:2px solid #b80000;border-bottom:2px solid #b80000;font-weight:600}
td.hl{background:#fff3a3;outline:2px solid #b80000}
#advisor{border-left:6px solid #b80000;background:#fff5f5;padding:8px 12px;margin:12px 0;max-width:1100px}
.note{color:#616e7c;font-size:12px}.legend span{display:inline-block;padding:2px 8px;margin-right:4px}
#filters{margin:10px 0;position:sticky;top:0;background:#fff;padding:6px 0;z-index:1}
#filters label{margin-right:14px}#search{width:320px}
"""
_SCRIPT = """
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll('#tensors tbody tr'));
  var search = document.getElementById('search'), type = document.getElementById('type');
  var differing = document.getElementById('differing'), diverged = document.getElementById('diverged');
  var introducing = document.getElementById('introducing'), shown = document.getElementById('shown');
  function apply() {
    var text = search.value.trim().toLowerCase(), count = 0;
    rows.forEach(function (row) {
      var d = row.dataset;
      var keep = (!text || d.text.indexOf(text) >= 0) && (!type.value || d.type === type.value) &&
        (!differing.checked || d.state !== 'identical') && (!diverged.checked || d.state === 'diverged') &&
        (!introducing.checked || d.introduces === '1');
      row.hidden = !keep;
      if (keep) count += 1;
    });
    shown.textContent = count + ' of ' + rows.length + ' tensors shown';
  }
  [search, type, differing, diverged, introducing].forEach(function (control) {
    control.addEventListener('input', apply);
    control.addEventListener('change', apply);
  });
  apply();
})();
"""
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
_POLICY = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_SCRIPT_HASH}'; form-action 'none'"


def write_report(comparison, path, isolated=None):
    """Writes the page for a ``dump_compare.Comparison`` to ``path``, atomically.

    Args:
      comparison: the comparison.
      path: the HTML file.
      isolated: ``isolate.Isolated`` results to show (None: not rerun).
    Raises:
      OutputFileError: ``path`` is not a regular file or cannot be written.
    """
    atomic_write.write_output(path, render(comparison, isolated), "HTML report")


def render(comparison, isolated=None):
    """The page's HTML text."""
    step = "" if comparison.step is None else f", step {comparison.step}"
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{_POLICY}\">",
        f"<title>npu-dump compare{_text(step)}</title><style>{_STYLE}</style></head><body>",
        "<h1>npu-dump compare</h1>",
        f"<p>my dump: <code>{_text(comparison.mine)}</code><br>ground truth: <code>{_text(comparison.truth)}</code>"
        f"{_text(step)}; a tensor diverges below cosine similarity {comparison.threshold:g}</p>",
        _configuration(comparison),
        _counts(comparison),
        _advisor(comparison),
        _introducing(comparison),
        _isolated(isolated),
        _tensor_table(comparison),
        f"<script>{_SCRIPT}</script></body></html>",
    ]
    return "".join(parts)


def _configuration(comparison):
    config = comparison.config
    if config is None:
        return ""
    parts = [f"<h2>Configuration</h2><p id='configuration'>{_text(config.summary_line())}</p>"]
    if config.differences:
        parts.append("<table><tr><th>section</th><th>setting</th><th>mine</th><th>ground truth</th></tr>")
        for section, key, mine, truth in config.differences:
            parts.append(f"<tr><td>{_text(section)}</td><td>{_text(key)}</td>")
            parts.append(
                f"<td>{_text(run_config.shown_value(mine))}</td><td>{_text(run_config.shown_value(truth))}</td></tr>"
            )
        parts.append("</table>")
    return "".join(parts)


def _counts(comparison):
    compared = comparison.compared
    return (
        f"<p id='counts'>{len(compared)} tensors compared: {sum(r.identical for r in compared)} identical, "
        f"{sum(not r.identical for r in compared)} differ, {sum(r.diverged for r in compared)} diverge</p>"
    )


def _advisor(comparison):
    advice = comparison.advice
    if advice is None:
        return "<div id='advisor'>No op introduces error and none diverges.</div>"
    site = comparison.source_of(advice.name)
    where = f" created at <code>{_text(site)}</code>" if site else ""
    cause = f"likely cause <b>{_text(advice.cause)}</b>: " if advice.cause else ""
    return (
        f"<div id='advisor'><a href='#op-{advice.sequence}'>#{advice.sequence} {_text(advice.name)}</a> "
        f"({_text(advice.op_type)}){where}: {cause}{_text(advice.detail)}.<br>Try: {_text(advice.remedy)}.</div>"
    )


def _introducing(comparison):
    named = comparison.introducing
    rule = f"output error &ge; {error_origin.FACTOR:g} &times; input error and &ge; {error_origin.FLOOR:g}"
    if not named:
        return f"<h2>Ops that introduce error</h2><p>None ({rule}).</p>"
    items = "".join(
        f"<li><a href='#op-{op.sequence}'>#{op.sequence} {_text(op.name)}</a>: {_text(op.describe())}"
        + (f" &mdash; <code>{_text(site)}</code>" if (site := comparison.source_of(op.name)) else "")
        + "</li>"
        for op in named
    )
    heading = f"<h2>Ops that introduce error</h2><p class='note'>{rule}, in execution order</p>"
    return f"{heading}<ol id='origins'>{items}</ol>"


def _isolated(results):
    if results is None:
        return ""
    if not results:
        return "<h2>Isolated reruns</h2><p>No op to rerun.</p>"
    parts = [
        "<h2>Isolated reruns</h2><p class='note'>each op on the ground truth's inputs, on the CPU; own error = the op "
        f"at my run's types vs float64; it introduces error when own error &ge; {error_origin.FLOOR:g}</p>",
        "<table id='reruns'><tr><th>#</th><th>op</th><th>type</th><th>own error</th><th>my output vs rerun</th>"
        "<th>ground truth vs rerun</th><th>verdict</th></tr>",
    ]
    for found in results:
        if found.reason:
            verdict, numbers = f"not rerun: {found.reason}", ("", "", "")
        else:
            verdict = "introduces error" if found.introduces else "carries error from its inputs"
            numbers = tuple(_number(v) for v in (found.own_error, found.mine_error, found.truth_error))
        parts.append(
            f"<tr><td class='n'>{found.sequence}</td><td>{_text(found.name)}</td><td>{_text(found.op_type)}</td>"
            + "".join(f"<td class='n'>{n}</td>" for n in numbers)
            + f"<td>{_text(verdict)}</td></tr>"
        )
    parts.append("</table>")
    return "".join(parts)


def _tensor_table(comparison):
    rows = sorted(comparison.rows, key=_execution_order)
    origins = {op.key: op for op in comparison.origins}
    advice = comparison.advice
    first = advice.key if advice is not None else None
    types = sorted({(row.mine or row.truth).op_type for row in rows})
    parts = [
        "<h2>Tensors in execution order</h2><div id='filters'>",
        "<label>search <input id='search' type='search' placeholder='op name, type or source line'></label>",
        "<label>op type <select id='type'><option value=''>all</option>",
        "".join(f"<option value='{_text(t)}'>{_text(t)}</option>" for t in types),
        "</select></label><label><input id='differing' type='checkbox'> differing</label>",
        "<label><input id='diverged' type='checkbox'> diverged</label>",
        "<label><input id='introducing' type='checkbox'> ops that introduce error</label>",
        "<span id='shown' class='note'></span></div>",
        "<p class='legend note'>relative error |a &minus; b| / |b|: <span class='e0'>identical</span>",
        f"<span class='e1'>&lt; {ERROR_CLASSES[0]:g}</span><span class='e2'>&lt; {ERROR_CLASSES[1]:g}</span>",
        f"<span class='e3'>&lt; {ERROR_CLASSES[2]:g}</span><span class='e4'>larger, or diverged</span></p>",
        "<table id='tensors'><thead><tr><th>#</th><th>op</th><th>type</th><th>tensor</th><th>dtype mine / truth</th>"
        "<th>shape</th><th>cosine</th><th>max abs err</th><th>rel err</th><th>overflow</th>"
        "<th>op: input &rarr; output error</th><th>source</th><th>note</th></tr></thead><tbody>",
    ]
    anchored = set()
    for row in rows:
        parts.append(_tensor_row(comparison, row, origins.get(row.key[0]), row.key[0] == first, anchored))
    parts.append("</tbody></table>")
    return "".join(parts)


def _execution_order(row):
    return (row.sequence is None, row.sequence or 0, row.key[1] != "input", row.key[2], row.key)


def _tensor_row(comparison, row, origin, first, anchored):
    side = row.mine or row.truth
    site = comparison.source(row) or ""
    state = "diverged" if row.diverged else "identical" if row.identical else "differs"
    classes = [_error_class(row)] + (["first"] if first else [])
    anchor = ""
    if row.sequence is not None and row.sequence not in anchored:
        anchored.add(row.sequence)
        anchor = f" id='op-{row.sequence}'"
    introduces = origin is not None and origin.introduces
    op_error = ""
    if origin is not None and row.key[1] == "output":
        op_error = f"{_number(origin.input_error)} &rarr; {_number(origin.output_error)}"
        op_error += " <b>introduces</b>" if introduces else ""
    metrics = row.metrics
    searchable = " ".join((side.op_name, side.op_type, site)).lower()
    return (
        f"<tr{anchor} class='{' '.join(classes)}' data-type='{_text(side.op_type)}' data-state='{state}' "
        f"data-introduces='{int(introduces)}' data-text='{_text(searchable)}'>"
        f"<td class='n'>{'' if row.sequence is None else row.sequence}</td><td>{_text(side.op_name)}</td>"
        f"<td>{_text(side.op_type)}</td><td>{row.key[1]} {row.key[2]}</td>"
        f"<td>{_text(row.dtype_mine or '-')} / {_text(row.dtype_truth or '-')}</td><td>{_text(row.shape)}</td>"
        f"<td class='n'>{_metric(metrics, 'CosineSimilarity')}</td><td class='n'>{_metric(metrics, 'MaxAbsoluteError')}"
        f"</td><td class='n'>{_metric(metrics, 'RelativeEuclideanDistance')}</td><td>{_text(row.overflow)}</td>"
        f"<td class='n'>{op_error}</td><td class='src{' hl' if first and site else ''}'>{_text(site)}</td>"
        f"<td>{_text(row.reason)}</td></tr>"
    )


def _error_class(row):
    if not row.comparable:
        return "na"
    if row.identical:
        return "e0"
    error = error_origin.row_error(row)
    if row.diverged or math.isnan(error):
        return "e4"
    return next((f"e{i}" for i, bound in enumerate(ERROR_CLASSES, 1) if error < bound), "e4")


def _metric(metrics, name):
    value = metrics.get(name)
    return "" if value is None else _number(value)


def _number(value):
    if value is None:
        return "?"
    if isinstance(value, str):
        return _text(value)
    return "NaN" if math.isnan(value) else "inf" if math.isinf(value) else f"{value:.4g}"


def _text(value):
    return inert_text.html_text(value)
