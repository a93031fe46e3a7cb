"""npu-dump compare's advisor line and --html page: the likely cause at the op that introduces error, and a page a
person reads, checked in a real headless Chromium (search, filters, highlighting, inert names, no request)."""

import html.parser
import json
import os
import re

import numpy as np
import pytest
from helpers.browser import console_errors, headless_chromium, visible_rows
from helpers.dump import dump_planted_chain
from helpers.paths import REPO_ROOT
from helpers.processes import run_module, run_python

from npu_bridge.core import dump
from npu_bridge.core.dump import compare_advice, op_graph, run_config
from npu_bridge.core.dump.cli import main

STEP = "20260101000000/0/graph/1/0"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("chain")
    return dump_planted_chain(base / "ascend", "ascend", seed=3), dump_planted_chain(base / "cpu", "cpu", seed=3)


@pytest.fixture(scope="module")
def page(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("page")
    code = main(["compare", *map(str, runs), "-o", str(out / "r.csv"), "--html", str(out / "r.html"), "--isolate"])
    assert code == 1
    return out / "r.html"


class _Rows(html.parser.HTMLParser):
    """The tensor table's rows: (attributes of the tr, [(cell attributes, cell text)])."""

    def __init__(self):
        super().__init__()
        self.rows, self._in_body, self._cell = [], False, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows.append((attrs, []))
        elif tag == "td" and self._in_body:
            self._cell = (attrs, [])

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.rows[-1][1].append((self._cell[0], "".join(self._cell[1]).strip()))
            self._cell = None
        elif tag == "tbody":
            self._in_body = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1].append(data)


def table_rows(path):
    parser = _Rows()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.rows


def test_summary_ends_the_introducing_ops_with_the_advisors_likely_cause_and_remedy(runs, tmp_path, capsys):
    assert main(["compare", *map(str, runs), "-o", str(tmp_path / "r.csv")]) == 1
    lines = capsys.readouterr().out.splitlines()
    (advice,) = [line for line in lines if line.startswith("advisor:")]
    assert re.match(
        r"advisor: #\d+ proj/MatMul, created at .*helpers/dump\.py:\d+ in dump_planted_chain \(MatMul\): likely cause "
        r"fp16 accumulation: MatMul accumulates, and its (input|output) \d is DT_FLOAT16 where the ground truth's is "
        r"DT_FLOAT; try: keep it in float32 \(modify_mixlist: MatMul in blacklist",
        advice,
    ), advice
    assert lines.index(advice) < next(i for i, line in enumerate(lines) if line.startswith("first diverging op"))


def test_page_lists_tensors_in_execution_order_coloured_by_error_and_marks_the_first_introducing_op(page):
    rows = table_rows(page)
    sequences = [int(cells[0][1]) for _, cells in rows if cells[0][1]]
    assert sequences == sorted(sequences) and len(rows) >= 17
    by_tensor = {(cells[1][1], cells[3][1]): (attrs, cells) for attrs, cells in rows}
    matmul_attrs, matmul_cells = by_tensor[("proj/MatMul", "output 0")]
    assert "first" in matmul_attrs["class"].split() and matmul_attrs["data-introduces"] == "1"
    assert matmul_attrs["class"].split()[0] == "e3"  # relative error ~4e-4: in [1e-4, 1e-2)
    source_attrs, source = matmul_cells[11]
    assert "hl" in source_attrs["class"].split() and re.search(r"helpers/dump\.py:\d+ in dump_planted_chain", source)
    center_attrs, center_cells = by_tensor[("center", "output 0")]
    assert center_attrs["class"].split() == ["e4"] and center_attrs["data-state"] == "diverged"
    assert re.match(r"[0-9.e-]+ → [0-9.e+-]+ introduces", center_cells[10][1])  # it amplifies: named too
    assert by_tensor[("scale", "output 0")][0]["class"] == "e0"  # identical
    text = page.read_text(encoding="utf-8")
    assert "likely cause <b>fp16 accumulation</b>" in text and "<a href='#op-" in text
    assert re.search(r"<table id='reruns'>.*proj/MatMul.*introduces error", text, re.S)  # --isolate's results
    assert "http://" not in text and "https://" not in text  # self-contained


@pytest.mark.slow
def test_page_in_a_headless_browser_searches_filters_and_jumps_to_the_introducing_op(page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    with headless_chromium() as driver:
        driver.get(page.as_uri())
        shown = driver.find_element(By.ID, "shown")
        total = len(table_rows(page))
        assert shown.text == f"{total} of {total} tensors shown"  # the script ran under the page's policy
        search = driver.find_element(By.ID, "search")
        search.send_keys("MATMUL")  # op type or name, any case
        assert {row[1].split("/npu_round")[0] for row in visible_rows(driver, "#tensors tbody tr")} == {"proj/MatMul"}
        search.clear()
        search.send_keys("dump_planted_chain")  # the source line is searched too: every user op was made there
        sourced = [cells for _, cells in table_rows(page) if cells[11][1]]
        assert len(visible_rows(driver, "#tensors tbody tr")) == len(sourced) >= 17
        search.clear()
        driver.find_element(By.ID, "introducing").click()
        assert {row[1] for row in visible_rows(driver, "#tensors tbody tr")} == {"proj/MatMul", "center"}
        driver.find_element(By.ID, "introducing").click()
        Select(driver.find_element(By.ID, "type")).select_by_value("Sub")
        assert {row[1] for row in visible_rows(driver, "#tensors tbody tr")} == {"center"}
        Select(driver.find_element(By.ID, "type")).select_by_value("")
        driver.find_element(By.ID, "diverged").click()
        diverged = visible_rows(driver, "#tensors tbody tr")
        assert diverged and all(row[1] in ("center", "act", "total") for row in diverged)
        assert shown.text == f"{len(diverged)} of {total} tensors shown"
        driver.find_element(By.ID, "diverged").click()
        first = driver.find_element(By.CSS_SELECTOR, "tr.first td.hl")
        assert first.value_of_css_property("outline-style") == "solid" and "dump_planted_chain" in first.text
        driver.find_element(By.CSS_SELECTOR, "#advisor a").click()
        assert driver.execute_script("return location.hash").startswith("#op-")
        assert console_errors(driver) == []


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_the_worked_example_is_found_from_one_dumped_step_of_each_run(tmp_path):
    # examples/find_precision_culprit.py: 16 branches whose fp16 MatMuls each introduce a little error; branch 11's
    # overflows. The advisor must pass over the harmless ones and name that MatMul and its line.
    script = os.path.join(REPO_ROOT, "examples", "find_precision_culprit.py")
    for name, extra in (("fp16", {}), ("fp32", {"precision_mode": "must_keep_origin_dtype"})):
        (tmp_path / name).mkdir()
        options = {"enable_dump": True, "dump_path": str(tmp_path / name), "dump_step": "0", "dump_mode": "all"}
        env = {"NPU_BRIDGE_DEVICE_TARGET": "ascend", "NPU_BRIDGE_OPTIONS": json.dumps({**options, **extra})}
        ran = run_python(script, env=env, timeout=120)
        assert ran.returncode == 0, ran.stderr[-3000:]
    page = tmp_path / "report.html"
    compared = run_module(
        "npu_bridge.core.dump.cli",
        ["compare", str(tmp_path / "fp16"), str(tmp_path / "fp32"), "-o", str(tmp_path / "r.csv"), "--html", str(page)],
        timeout=120,
    )
    assert compared.returncode == 1, compared.stderr[-3000:]
    (advice,) = [line for line in compared.stdout.splitlines() if line.startswith("advisor:")]
    line = next(n for n, text in enumerate(open(script, encoding="utf-8"), 1) if 'name="matmul"' in text)
    assert re.match(
        rf"advisor: #\d+ branch_11/matmul, created at \S*find_precision_culprit\.py:{line} in <module> \(MatMul\): "
        r"likely cause overflow",
        advice,
    ), advice
    first = [attrs for attrs, cells in table_rows(page) if "first" in attrs["class"].split()]
    assert (
        first
        and {attrs["id"] for attrs in first if "id" in attrs}
        and all("branch_11/matmul" in attrs["data-text"] for attrs in first)
    )


def hostile_trees(tmp_path):
    """Two one-op trees whose op name and source line hold markup, and a source line that is a URL."""
    trees = []
    name = "x<img src=x onerror=\"document.title='pwned'\">'/Relu"
    for tree, values in (("mine", [1.0, 2.0, 4.0]), ("truth", [1.0, 2.5, 3.0])):
        step = tmp_path / tree / STEP
        step.mkdir(parents=True)
        dump.write_dump_file(
            step / "Relu.x.1.0.1700000000000100", name, inputs=[np.float32(values)], outputs=[np.float32(values)]
        )
        sources = {name: "<script>document.title='pwned'</script>\x1b[2J http://example.invalid/x.py:1"}
        (tmp_path / tree / "op_sources.json").write_text(json.dumps(sources), encoding="utf-8")
        trees.append(tmp_path / tree)
    return trees


@pytest.mark.slow
def test_page_shows_markup_in_names_and_source_lines_as_text(tmp_path):
    mine, truth = hostile_trees(tmp_path)
    page = tmp_path / "r.html"
    assert main(["compare", str(mine), str(truth), "-o", str(tmp_path / "r.csv"), "--html", str(page)]) == 1
    text = page.read_text(encoding="utf-8")
    assert "<img" not in text and "<script>document" not in text and "\x1b" not in text
    from selenium.webdriver.common.by import By

    with headless_chromium() as driver:
        driver.get(page.as_uri())
        assert driver.title.startswith("npu-dump compare")
        assert driver.find_elements(By.CSS_SELECTOR, "#tensors img, #tensors script") == []
        cells = visible_rows(driver, "#tensors tbody tr")
        assert any(row[1].startswith("x<img src=x") for row in cells)
        assert any("<script>document.title='pwned'</script>\\x1b[2J" in row[11] for row in cells)
        assert console_errors(driver) == []


def test_html_page_path_is_checked_before_the_comparison(runs, tmp_path, capsys):
    code = main(["compare", *map(str, runs), "-o", str(tmp_path / "r.csv"), "--html", str(tmp_path)])
    assert code == 2
    assert re.search(r"cannot write the HTML report .*: it is a directory", capsys.readouterr().err)
    assert not (tmp_path / "r.csv").exists()


def test_rank_by_rank_compare_writes_one_page_per_rank(tmp_path, capsys):
    for tree, scale in (("mine", 1.001), ("truth", 1.0)):
        for device in (0, 1):
            step = tmp_path / tree / "20260101000000" / str(device) / "graph" / "1" / "0"
            step.mkdir(parents=True)
            values = np.float32([1.0, 2.0, 3.0]) * (scale if device == 1 else 1.0)
            dump.write_dump_file(step / "Relu.r.1.0.1700000000000100", "r", inputs=[values], outputs=[values])
    page = tmp_path / "out" / "ranks.html"
    page.parent.mkdir()
    main(
        ["compare", str(tmp_path / "mine"), str(tmp_path / "truth"), "-o", str(tmp_path / "r.csv"), "--html", str(page)]
    )
    out = capsys.readouterr().out
    assert sorted(os.listdir(page.parent)) == ["ranks_device0.html", "ranks_device1.html"]
    assert "report: " in out and "ranks_device1.html" in out
    assert "e0" in table_rows(page.parent / "ranks_device0.html")[0][0]["class"]


def write_op(tree, op_type, name, inputs, outputs, time=100):
    step = tree / STEP
    step.mkdir(parents=True, exist_ok=True)
    dump.write_dump_file(step / f"{op_type}.{name}.1.0.1700000000000{time}", name, inputs=inputs, outputs=outputs)


def advice_of(tmp_path, op_type, mine_io, truth_io, options=None):
    """The advisor's finding for one op dumped with (inputs, outputs) in each tree; ``options``: my run's options."""
    trees = []
    for tree, (inputs, outputs) in (("mine", mine_io), ("truth", truth_io)):
        write_op(tmp_path / tree, op_type, "op", inputs, outputs)
        trees.append(tmp_path / tree)
    for tree, opts in ((trees[0], options), (trees[1], {})):
        if options is not None:
            config = {"options": opts, "environment": {}, "versions": {}, "seeds": {}}
            (tree / run_config.CONFIG_FILE).write_text(json.dumps(config), encoding="utf-8")
    return dump.compare(*trees).advice


F32, F16 = np.float32, np.float16


@pytest.mark.parametrize(
    "op_type, mine_io, truth_io, options, cause",
    [
        (
            "RandomUniform",
            ([np.int32([3])], [F32([0.1, 0.7, 0.4])]),
            ([np.int32([3])], [F32([0.9, 0.2, 0.5])]),
            None,
            "random op",
        ),
        (
            "Exp",
            ([F16([10, 12])], [F16([np.inf, np.inf])]),
            ([F32([10, 12])], [F32([22026.5, 162754.8])]),
            None,
            "overflow",
        ),
        ("Mul", ([F16([300, 2])], [F16([65504, 4])]), ([F32([300, 2])], [F32([90000, 4])]), None, "saturation"),
        (
            "LayerNorm",
            ([F32([1, 2, 3])], [F32([-1.2, 0, 1.2])]),
            ([F32([1, 2, 3])], [F32([-1.2247, 0, 1.2247])]),
            None,
            "implmode",
        ),
        (
            "LayerNorm",
            ([F32([1, 2, 3])], [F32([-1.2, 0, 1.2])]),
            ([F32([1, 2, 3])], [F32([-1.2247, 0, 1.2247])]),
            {"op_select_implmode": "high_precision"},
            "",
        ),
        ("Sum", ([F16([1000, 0.4])], [F16([1000])]), ([F32([1000, 0.4])], [F32([1000.4])]), None, "fp16 accumulation"),
        ("Relu", ([F16([0.1, 0.2])], [F16([0.1, 0.2])]), ([F32([0.1, 0.2])], [F32([0.1, 0.2])]), None, "cast"),
        ("Relu", ([F32([1, 2])], [F32([1, 2])]), ([F32([1, 4])], [F32([1, 4])]), None, "inherited input"),
    ],
    ids=[
        "random op",
        "overflow",
        "saturation",
        "implmode",
        "high_precision selected",
        "fp16 accumulation",
        "cast",
        "inherited",
    ],
)
def test_advisor_names_the_likely_cause(tmp_path, op_type, mine_io, truth_io, options, cause):
    advice = advice_of(tmp_path, op_type, mine_io, truth_io, options)
    assert advice is not None and advice.cause == cause, advice
    assert advice.name == "op" and advice.op_type == op_type and advice.remedy
    line = advice.line()
    assert line.startswith(f"advisor: #1 op ({op_type}): " + (f"likely cause {cause}: " if cause else ""))


def test_advisor_is_silent_when_nothing_differs(tmp_path):
    same = ([F32([1, 2])], [F32([1, 2])])
    assert advice_of(tmp_path, "Relu", same, same) is None
    assert compare_advice.ACCUMULATING_OPS >= {"MatMul", "Conv2D", "Sum", "Mean"}


def test_advisor_says_when_the_runs_were_given_different_data(tmp_path):
    # The first diverging tensor is an input no dumped op gave (a placeholder): nothing later can be compared.
    for tree, values in (("mine", [1, 2]), ("truth", [2, 1])):
        write_op(tmp_path / tree, "Reshape", "op", [F32(values)], [F32(values)])
        graph = {"op": {"type": "Reshape", "inputs": ["input:0", "op/shape:0"]}}
        (tmp_path / tree / op_graph.GRAPH_FILE).write_text(json.dumps(graph), encoding="utf-8")
    advice = dump.compare(tmp_path / "mine", tmp_path / "truth").advice
    assert advice.cause == "different inputs" and "seed the input pipeline" in advice.remedy
    assert advice.line().startswith("advisor: #1 op (Reshape): likely cause different inputs: its input 0 already")
