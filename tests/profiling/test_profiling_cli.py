"""npu-prof: summary, report and export of profiling directories, bad input, and a two-rank profile."""

import glob
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import helpers.collectives
import pytest
from helpers.paths import REPO_ROOT
from helpers.profiling import end_profiles, models, profiled_config, read_csv, the_profile, train

from npu_bridge.core.profiling import layout
from npu_bridge.core.profiling.cli import main


@pytest.fixture(autouse=True)
def _no_profile_left():
    yield
    end_profiles()


@pytest.fixture
def profile(tmp_path):
    train(profiled_config(tmp_path / "out", training_trace="on", task_trace="on"), steps=4)
    return the_profile(tmp_path / "out")


def assert_self_contained_report(path):
    text = open(path, encoding="utf-8").read()
    html.parser.HTMLParser().feed(text)
    assert not re.search(r"""(src|href)=['"]https?:""", text)  # nothing to download
    svgs = re.findall(r"<svg.*?</svg>", text, re.S)
    assert svgs
    for svg in svgs:
        ElementTree.fromstring(svg)
    return text


def test_summary_prints_the_headline_numbers(profile, capsys):
    assert main(["summary", os.path.dirname(profile), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert f"profile of rank 0 (device 0, cpu backend): {profile}" in out
    assert "4 iterations of graph" in out and "mean iteration time" in out and "FP to BP" in out
    assert (
        len(
            re.search(r"top op types by time \(the first iteration of graph_\d+ left out\): (.*)", out)
            .group(1)
            .split(", ")
        )
        == 3
    )


@pytest.mark.op_types
def test_report_is_a_self_contained_html_page(profile, tmp_path, capsys):
    target = str(tmp_path / "r.html")
    assert main(["report", profile, "-o", target]) == 0
    assert f"wrote {target}" in capsys.readouterr().out
    text = assert_self_contained_report(target)
    assert "Step time per iteration" in text and "Top op types by total time" in text
    assert "Conv2D" in text and "conv/Conv2D (detected)" in text
    assert main(["report", profile]) == 0
    assert os.path.isfile(os.path.join(profile, "report.html"))


def test_export_redoes_the_analysis_with_other_points(profile, capsys):
    assert main(["export", profile, "--bp-point", "gradients/dense/MatMul_grad/MatMul"]) == 0
    assert "step_trace:" in capsys.readouterr().out
    training = [m for m in models(profile).values() if m["training"]][0]
    assert (training["bp_point"], training["bp_point_source"]) == ("gradients/dense/MatMul_grad/MatMul", "option")
    assert len(glob.glob(os.path.join(profile, layout.EXPORT_DIR, "op_summary_*.csv"))) == 1  # replaced
    assert len(read_csv(profile, "step_trace")[1]) == 4


def test_summary_reports_runs_dropped_by_the_storage_limit(profile, capsys):
    info = layout.read_info(profile)
    info["runs_dropped"], info["settings"]["storage_limit_mb"] = 3, 200
    layout.write_info(profile, info)
    assert main(["summary", profile]) == 0
    assert "3 runs were not recorded: storage_limit 200MB" in capsys.readouterr().out


def test_a_profile_that_was_never_exported_is_exported_first(profile, capsys):
    shutil.rmtree(os.path.join(profile, layout.EXPORT_DIR))
    info = layout.read_info(profile)
    del info["exported"]
    layout.write_info(profile, info)
    assert main(["summary", profile]) == 0
    assert "4 iterations of graph" in capsys.readouterr().out
    assert layout.exported_file(profile, "step_trace", "csv")


def test_bad_input_exits_2_and_names_it(profile, tmp_path, capsys):
    missing = str(tmp_path / "nope")
    assert main(["summary", missing]) == 2
    assert f"profiling directory {missing} does not exist" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "out" / "..")]) == 0  # a directory holding a profile is fine
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["summary", str(empty)]) == 2
    assert "no npu_bridge profile" in capsys.readouterr().err
    step_trace = layout.exported_file(profile, "step_trace", "csv")
    with open(step_trace, "a", encoding="utf-8") as f:
        f.write("0,5,1,1,1,abc,1,1,1,2\n")
    assert main(["summary", profile]) == 2
    assert "column 'Iteration Time(us)' holds 'abc', not a number" in capsys.readouterr().err
    with open(layout.raw_path(profile, 0), "wb") as f:
        f.write(b"garbage")
    assert main(["export", profile]) == 2
    assert "not an npu_bridge raw profiling file" in capsys.readouterr().err
    with open(os.path.join(profile, layout.INFO_FILE), "w", encoding="utf-8") as f:
        f.write("{")
    assert main(["summary", profile]) == 2
    assert "info.json cannot be read" in capsys.readouterr().err


def test_a_damaged_info_json_names_the_file_and_the_field(profile, capsys):
    path = os.path.join(profile, layout.INFO_FILE)
    good = layout.read_info(profile)
    damages = [
        ({"settings": 5}, "'settings' holds 5; it should hold an object"),
        ({"settings": None}, "'settings' holds None; it should hold an object"),
        ({"backend": ["cpu"]}, "'backend' holds ['cpu']; it should hold the backend: 'cpu', 'gpu', 'ascend'"),
        ({"models": "x"}, "'models' holds 'x'; it should hold a list of graph objects"),
        ({"runs_recorded": []}, "'runs_recorded' holds []; it should hold a number of runs"),
        ({"rank_id": True}, "'rank_id' holds True; it should hold a rank id (an integer >= 0)"),
        ({"device_id": "../x" * 100}, "'device_id' holds '../x../x"),
        ({"settings": dict(good["settings"], task_level=None)}, "'settings.task_level' holds None; it should hold"),
        ({"models": [dict(good["models"][0], runs="٣")]}, "'models[0].runs' holds '٣'; it should hold an integer"),
    ]
    for changes, problem in damages:
        layout.write_info(profile, dict(good, **changes))
        for command in ("summary", "report", "export"):
            assert main([command, profile]) == 2, (changes, command)
            err = capsys.readouterr().err
            assert f"{path} is damaged: {problem}" in err, err
            assert "Traceback" not in err and len(err) < 1000
    with open(path, "w", encoding="utf-8") as f:
        f.write("{}")
    assert main(["summary", profile]) == 2
    assert f"{path} is damaged: 'rank_id' is missing; it should hold a rank id" in capsys.readouterr().err
    layout.write_info(profile, good)
    assert main(["summary", profile]) == 0


@pytest.mark.timeout(120)
def test_report_refuses_an_output_that_is_not_a_regular_file(profile, tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # nobody reads it: opening it for writing would block forever
    for target, kind in ((fifo, "a FIFO"), ("/dev/full", "a character device"), (tmp_path, "a directory")):
        assert main(["report", profile, "-o", str(target)]) == 2
        assert (
            f"npu-prof: cannot write the report {target}: it is {kind}, not a regular file" in capsys.readouterr().err
        )
    target = tmp_path / "r.html"
    assert main(["report", profile, "-o", str(target)]) == 0
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".tmp.")]


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_npu_prof_runs_as_a_module(profile):
    result = subprocess.run(
        [sys.executable, "-m", "npu_bridge.core.profiling.cli", "summary", profile],
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "4 iterations of graph" in result.stdout


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.op_types
def test_two_ranks_write_one_profile_each_and_one_report(tmp_path, capsys):
    output = str(tmp_path / "prof")
    result, _ = helpers.collectives.launch("profiling_worker.py", 2, args=[output], timeout=200)
    assert result.returncode == 0, result.stdout + result.stderr
    profiles = sorted(glob.glob(os.path.join(output, "PROF_*")), key=lambda p: p.rsplit("_", 1)[-1])
    assert [p.rsplit("_", 1)[-1] for p in profiles] == ["rank0", "rank1"]
    for rank, profile_dir in enumerate(profiles):
        info = layout.read_info(profile_dir)
        assert (info["rank_id"], info["rank_size"], info["device_id"]) == (rank, 2, rank)
        assert os.path.isfile(layout.raw_path(profile_dir, rank))
        header, ops = read_csv(profile_dir, "op_summary")
        assert {op["Device_id"] for op in ops} == {str(rank)}
        # The gradient allreduce runs on TensorFlow's collectives: HCCL tasks, one per step at least.
        assert sum(op["Task Type"] == "HCCL" for op in ops) >= 3
        assert any(op["Task Type"] == "AI_CORE" and op["OP Type"] == "MatMul" for op in ops)
    assert main(["report", output]) == 0
    text = assert_self_contained_report(os.path.join(output, "report.html"))
    assert "<h2>Ranks</h2>" in text and text.index("Rank 0 &middot;") < text.index("Rank 1 &middot; device 1")
    assert main(["summary", output]) == 0
    out = capsys.readouterr().out
    assert out.index("rank 0 (device 0") < out.index("rank 1 (device 1")
    timeline = json.load(open(layout.exported_file(profiles[1], "msprof", "json"), encoding="utf-8"))
    assert all(e["pid"] // 10 == 1 for e in timeline["traceEvents"])  # device 1's process ids
