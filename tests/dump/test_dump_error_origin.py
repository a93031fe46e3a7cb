"""npu-dump compare names the op that introduces error, not the first tensor that shows it; --isolate reruns it on
the ground truth's inputs; and the two runs' configuration (run_config.json) is checked and listed first.

The plant (``helpers.dump.dump_planted_chain``): a chain scale -> shift -> proj/MatMul -> center -> act -> total,
dumped on the simulated Ascend backend (allow_fp32_to_fp16: the MatMul takes and gives fp16) and on the CPU backend
(float32, the ground truth). The MatMul's fp16 output is the only error made; center subtracts a constant close to
the MatMul's exact result, so its output is small and the MatMul's relative error of ~4e-4 becomes a cosine
similarity far below 0.99 there: the first diverging tensor is center's, two ops after the op that introduced the
error."""

import base64
import json
import os
import re
import shutil
import stat

import pytest
import tensorflow as tf
from helpers.dump import dump_planted_chain

from npu_bridge.core import dump
from npu_bridge.core.dump import error_origin, op_graph, run_config
from npu_bridge.core.dump.cli import main

v1 = tf.compat.v1
MARKED = "ASCEND_PLANT_NOTE"  # a variable that differs, holding a terminal escape
SECRET = "HCCL_PLANT_TOKEN"  # never written


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("chain")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(MARKED, "red\x1b[31m")
        patch.setenv(SECRET, "do-not-write")
        mine = dump_planted_chain(base / "ascend", "ascend", seed=3)
        patch.setenv(MARKED, "plain")
        truth = dump_planted_chain(base / "cpu", "cpu", seed=4)
    return mine, truth


def compare_output(capsys, mine, truth, tmp_path, *extra):
    code = main(["compare", str(mine), str(truth), "-o", str(tmp_path / "result.csv"), *extra])
    return code, capsys.readouterr().out.splitlines()


def line_index(lines, pattern):
    found = [i for i, line in enumerate(lines) if re.search(pattern, line)]
    assert found, f"no line matches {pattern!r} in:\n" + "\n".join(lines)
    return found[0]


def test_compare_names_the_op_that_introduces_error_before_the_first_diverging_one(runs, tmp_path, capsys):
    code, lines = compare_output(capsys, *runs, tmp_path)
    assert code == 1  # center diverges
    heading = line_index(lines, r"^ops that introduce error \(output error >= 10 x input error and >= 0.0001\)")
    first = re.match(
        r"  #(\d+) proj/MatMul, created at .*: input error 0, output error ([0-9.e-]+)", lines[heading + 1]
    )
    assert first, lines[heading + 1]
    assert float(first.group(2)) > 1e-4
    diverging = re.match(
        r"first diverging op: #(\d+) center output 0 \(cosine ([0-9.]+)",
        lines[line_index(lines, "^first diverging op")],
    )
    assert diverging and float(diverging.group(2)) < 0.99
    assert int(diverging.group(1)) > int(first.group(1))  # the first tensor below the threshold is a later op's
    assert line_index(lines, "^ops that introduce error") < line_index(lines, "^first diverging op")
    comparison = dump.compare(*runs)
    assert [op.name for op in comparison.introducing][0] == "proj/MatMul"
    assert comparison.first_divergence.key[0] == "center"
    carried = {op.name: op for op in comparison.origins}["act"]
    assert not carried.introduces and carried.input_error > 0.1  # act only carries what center gives it


def test_isolate_reports_the_introducing_ops_own_error_large_and_a_carrying_ops_small(runs, tmp_path, capsys):
    code, lines = compare_output(capsys, *runs, tmp_path, "--isolate")
    assert code == 1
    heading = line_index(lines, r"^isolated reruns \(each op on the ground truth's inputs")
    rerun = "\n".join(lines[heading + 1 :])
    matmul = re.search(
        r"#\d+ proj/MatMul \(MatMul\): own error ([0-9.e-]+) -> introduces error; my output vs rerun", rerun
    )
    center = re.search(
        r"#\d+ center \(Sub\): own error ([0-9.e-]+) -> carries error from its inputs; my output vs rerun ([0-9.e+-]+)",
        rerun,
    )
    assert matmul and center, rerun
    assert float(matmul.group(1)) > error_origin.FLOOR
    assert float(center.group(1)) < 1e-6  # its own error: float32 rounding at most
    assert float(center.group(2)) > 0.1  # while its output in my run is far off: inherited


def test_isolate_says_why_an_op_without_its_recorded_node_is_not_rerun(runs, tmp_path, capsys):
    mine, truth = (shutil.copytree(root, tmp_path / name) for name, root in zip(("mine", "truth"), runs))
    for root in (mine, truth):
        os.remove(root / op_graph.GRAPH_FILE)
    code, lines = compare_output(capsys, mine, truth, tmp_path, "--isolate")
    assert code == 1
    assert any(
        "proj/MatMul (MatMul): not rerun: its type and attributes were not recorded (op_graph.json)" in line
        for line in lines
    ), lines


def test_isolate_refuses_a_node_def_that_is_not_a_pure_computation(runs, tmp_path, capsys):
    # A dump tree may come from someone else: its op_graph.json must not make compare write or read files.
    mine, truth = (shutil.copytree(root, tmp_path / name) for name, root in zip(("mine", "truth"), runs))
    planted = tmp_path / "written_by_rerun"
    with tf.Graph().as_default():
        nodes = {
            "proj/MatMul": tf.io.write_file(str(planted), "x").node_def,
            "center": tf.io.read_file(str(planted)).op.node_def,
        }
    for root in (mine, truth):
        entries = json.loads((root / op_graph.GRAPH_FILE).read_text())
        for name, node in nodes.items():
            entries[name]["node_def"] = base64.b64encode(node.SerializeToString()).decode("ascii")
        (root / op_graph.GRAPH_FILE).write_text(json.dumps(entries))
    code, lines = compare_output(capsys, mine, truth, tmp_path, "--isolate")
    assert code == 1
    assert not planted.exists()
    text = "\n".join(lines)
    assert "proj/MatMul (MatMul): not rerun: WriteFile is stateful" in text, text
    assert "center (Sub): not rerun: ReadFile takes or gives strings" in text, text


def test_the_runs_configuration_is_recorded_without_secrets_and_its_differences_come_first(runs, tmp_path, capsys):
    mine, truth = runs
    with open(mine / run_config.CONFIG_FILE, encoding="utf-8") as f:
        recorded = json.load(f)
    assert recorded["options"]["device_target"] == "ascend" and recorded["seeds"]["graph"] == 3
    assert recorded["environment"][MARKED] == "red\x1b[31m"
    assert SECRET not in recorded["environment"]
    assert recorded["versions"]["tensorflow"] == tf.__version__
    assert "do-not-write" not in (mine / run_config.CONFIG_FILE).read_text(encoding="utf-8")
    for name in (run_config.CONFIG_FILE, op_graph.GRAPH_FILE):  # owner-only, as the dump files
        assert stat.S_IMODE(os.stat(mine / name).st_mode) & 0o077 == 0
    _, lines = compare_output(capsys, mine, truth, tmp_path)
    assert lines[0].startswith("configuration differences (run_config.json of each run")
    section = lines[: line_index(lines, "^configuration differs in")]
    assert '  options device_target: mine "ascend", ground truth "cpu"' in section
    assert "  seeds graph: mine 3, ground truth 4" in section
    assert '  environment ASCEND_PLANT_NOTE: mine "red\\x1b[31m", ground truth "plain"' in section
    assert not any("\x1b" in line or "dump_path" in line for line in lines)
    summary = lines[line_index(lines, "^configuration differs in") :]
    assert summary[0].startswith("configuration differs in 4 settings: ")
    assert summary[1].startswith("compared ")  # the summary lists the differences first


def test_a_tree_without_run_config_is_named_and_not_checked(runs, tmp_path, capsys):
    mine = shutil.copytree(runs[0], tmp_path / "mine")
    os.remove(mine / run_config.CONFIG_FILE)
    _, lines = compare_output(capsys, mine, runs[1], tmp_path)
    assert lines[0] == "configuration: not checked (only the ground truth has run_config.json)"


def test_without_dumped_inputs_the_ops_producers_stand_in_for_them(tmp_path, capsys):
    mine = dump_planted_chain(tmp_path / "ascend", "ascend", seed=3, dump_mode="output")
    truth = dump_planted_chain(tmp_path / "cpu", "cpu", seed=3, dump_mode="output")
    with open(mine / op_graph.GRAPH_FILE, encoding="utf-8") as f:
        assert json.load(f)["proj/MatMul"]["inputs"] == ["shift:0", "Const:0"]
    code, lines = compare_output(capsys, mine, truth, tmp_path, "--isolate")
    assert code == 1
    heading = line_index(lines, "^ops that introduce error")
    assert re.match(r"  #\d+ proj/MatMul, created at .*: input error 0, output error", lines[heading + 1])
    summary = lines[line_index(lines, "^configuration differs in") :]
    assert summary[0] == "configuration differs in 2 settings: options backend, options device_target"
    # The constant the MatMul multiplies by is not dumped: the rerun says so rather than guessing.
    assert any(
        "proj/MatMul (MatMul): not rerun: the ground truth has no values of its input 1" in line for line in lines
    )
