"""tools/zoo_harness runs model directories of an Ascend/ModelZoo-TensorFlow checkout unchanged and classifies
each: here on tests/data/zoo, four zoo-style entries written for this test (a TF1 MNIST trainer, and a TF2 Keras
trainer that imports tf.keras before npu_device and downloads MNIST, which pass; a Python 2 script; a restore of
pretrained weights that cannot be made)."""

import json
import os
import subprocess
import sys

import pytest
from collective_helpers import REPO_ROOT, TESTS_DIR

HARNESS = os.path.join(REPO_ROOT, "tools", "zoo_harness")
ZOO = os.path.join(TESTS_DIR, "data", "zoo")


def _harness(*args, timeout=400):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    env.pop("NPU_BRIDGE_TF1", None)
    return subprocess.run(
        [sys.executable, HARNESS, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_the_draw_is_seeded_and_lists_tf1_and_tf2_entries():
    first = _harness("--zoo", ZOO, "--seed", "5", "--tf1", "2", "--tf2", "1", "--list")
    again = _harness("--zoo", ZOO, "--seed", "5", "--tf1", "2", "--tf2", "1", "--list")
    assert first.returncode == 0, first.stderr
    assert first.stdout == again.stdout
    kinds = [line.split()[0] for line in first.stdout.splitlines()]
    assert sorted(kinds) == ["tf1", "tf1", "tf2"]
    assert all(line.endswith("train_performance_1p.sh") for line in first.stdout.splitlines())


@pytest.mark.parametrize(
    "args, told",
    [
        (["--zoo", "/nonexistent/zoo"], "--zoo '/nonexistent/zoo' is not a folder"),
        (["--zoo", ZOO, "--tf1", "-1"], "--tf1 -1 is out of range"),
        (["--zoo", ZOO, "--steps", "0"], "--steps 0 is out of range"),
        (["--zoo", ZOO, "--timeout", "0"], "--timeout 0.0 is not a positive number of seconds"),
        (["--zoo", TESTS_DIR, "--list"], "has no TensorFlow/ folder"),
    ],
)
def test_bad_arguments_are_named(args, told):
    result = _harness(*args)
    assert result.returncode != 0
    assert told in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_draw_trains_the_runnable_entries_and_says_why_the_others_stop(tmp_path):
    out = tmp_path / "run"
    result = _harness("--zoo", ZOO, "--tf1", "3", "--tf2", "1", "--out", str(out), "--timeout", "200")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text())
    outcomes = {os.path.basename(r["dir"]): (r["outcome"], r["kit"]) for r in report["results"]}
    assert outcomes == {
        "SoftmaxMnist_ID0001_for_TensorFlow": ("pass", "mnist"),
        "DenseMnist_ID0002_for_TensorFlow2.X": ("pass", "mnist"),
        "Python2Tagger_ID0003_for_TensorFlow": ("script", None),
        "Pretrained_ID0004_for_TensorFlow": ("data", None),
    }, [(r["dir"], r["cause"]) for r in report["results"]]
    steps = {os.path.basename(r["dir"]): r["steps"] for r in report["results"]}
    assert steps["SoftmaxMnist_ID0001_for_TensorFlow"] == 3  # ended at the step limit, not after its 1000 steps
    assert report["summary"]["tf1"] == {
        "entries": 3,
        "outcomes": {"pass": 1, "script": 1, "data": 1},
        "runnable": 1,
        "passed": 1,
    }
    assert "tf1: passed 1 of 1 runnable (3 drawn)" in result.stdout
    assert (
        "| TensorFlow/contrib/nlp/Python2Tagger_ID0003_for_TensorFlow | tf1 | - | script |"
        in (out / "report.md").read_text()
    )
    # The copies ran, not the checkout: nothing was written into tests/data/zoo.
    assert not [name for _, _, files in os.walk(ZOO) for name in files if name.endswith(".log")]
    # A second run resumes: every entry is already measured, nothing runs again.
    again = _harness("--zoo", ZOO, "--tf1", "3", "--tf2", "1", "--out", str(out), "--timeout", "200", timeout=120)
    assert again.returncode == 0 and json.loads((out / "report.json").read_text())["results"] == report["results"]
