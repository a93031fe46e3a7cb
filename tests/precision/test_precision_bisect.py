"""``npu-debug bisect``: the search and its bound, the files it writes, NPU_BRIDGE_OPTIONS, and the tool on a script
with one planted culprit among 200 ops (named, within the bound, and its fix brings the loss back), run by an
unprivileged user (``helpers.unprivileged_users``), whose files the tool's are and who can use them."""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import helpers.unprivileged_users
import pytest
from helpers.paths import REPO_ROOT
from helpers.processes import npu_debug

from npu_bridge.core.accuracy import bisection, candidates, fix_files, metric, search
from npu_bridge.core.options import environment_options
from npu_bridge.core.options.parse import parse_values
from npu_bridge.core.precision import customize_dtypes, mixlist
from npu_bridge.core.runtime import system
from npu_bridge.core.runtime.errors import BisectError, EnvironmentVariableError

WORKER = os.path.join(REPO_ROOT, "examples", "find_precision_culprit.py")
CULPRIT = "branch_11/matmul"


def _counting(culprits):
    """A good(kept) that is true when every culprit is kept, and the list of calls."""
    calls = []

    def good(kept):
        calls.append(list(kept))
        return set(culprits) <= set(kept)

    return good, calls


@pytest.mark.parametrize("planted", [[137], [3, 150], [0], [199], [10, 11, 190]])
def test_the_search_finds_every_culprit_within_its_bound(planted):
    items = list(range(200))
    good, calls = _counting(planted)
    found, complete = search.culprits(items, good, max_culprits=5)
    assert complete and sorted(found) == planted
    assert len(calls) <= search.bound(200, len(planted))
    assert search.bound(200, 1) == 9  # ceil(log2(200)) + 1


def test_the_search_stops_at_max_culprits_and_says_it_is_incomplete():
    good, _ = _counting([5, 50, 150])
    found, complete = search.culprits(list(range(200)), good, max_culprits=2)
    assert not complete and found == [150, 50]


def test_ops_are_ordered_after_the_ops_they_read():
    entries = {
        "b": {"type": "Mul", "inputs": ["a:0", "x:0"]},
        "a": {"type": "MatMul", "inputs": ["x:0", "w:0"]},
        "c": {"type": "Split", "inputs": ["b:0"]},
        "d": {"type": "AddV2", "inputs": ["c:2", "b:0"]},
    }
    ops = candidates.ordered(entries)
    assert [op.name for op in ops] == ["a", "b", "c", "d"]
    assert next(op for op in ops if op.name == "c").outputs == 3  # d reads its output 2


def test_the_kept_files_parse_and_keep_float32(tmp_path):
    ops = [candidates.Op("layer/mm", "MatMul", 2, 1), candidates.Op("layer/sum", "Sum", 2, 1)]
    text = fix_files.customize_dtypes(fix_files.by_name(ops[:1]) + fix_files.by_type(ops[1:]))
    assert text == (
        "layer/mm::InputDtype:float32,float32,OutputDtype:float32\n"
        "OpType::ReduceSum:InputDtype:float32,float32,OutputDtype:float32\n"
    )
    rules = customize_dtypes.parse(text)
    assert {(r.selector, r.target) for r in rules} == {("type", "Sum"), ("name", "layer/mm")}
    path = tmp_path / "mixlist.json"
    path.write_text(fix_files.modify_mixlist(["MatMul", "Sum"]))
    assert json.loads(path.read_text()) == {"black-list": {"to-add": ["MatMulV2", "ReduceSum"]}}
    lists = mixlist.session_lists(str(path))
    assert "MatMul" in lists.black and "MatMul" not in lists.white


def test_the_metric_is_the_last_match_and_tolerance_is_relative():
    pattern = metric.compile_pattern(metric.DEFAULT_PATTERN)
    assert metric.find(pattern, "step 0: loss = 1.5\nstep 1: loss: 2e-3\n", "") == 0.002
    assert metric.find(pattern, "nothing", "loss = 7") == 7.0
    assert metric.find(pattern, "", "") is None
    assert metric.within(100.5, 100.0, 0.01, 0.0) and not metric.within(102.0, 100.0, 0.01, 0.0)
    assert not metric.within(math.nan, 1.0, 1.0, 1.0)
    with pytest.raises(BisectError, match="not a number"):
        metric.find(metric.compile_pattern(r"loss (\S+)"), "loss abc", "")


def test_npu_bridge_options_sets_options_over_the_scripts(tmp_path):
    lists = tmp_path / "mixlist.json"
    lists.write_text('{"black-list": {"to-add": ["Square"]}}')
    options = parse_values({"precision_mode": "allow_mix_precision", "modify_mixlist": str(lists)}, "test")
    environ = {"NPU_BRIDGE_OPTIONS": '{"precision_mode": "must_keep_origin_dtype", "modify_mixlist": null}'}
    changed = environment_options.apply(options, environ)
    assert changed.get("precision_mode") == "must_keep_origin_dtype" and not changed.is_set("modify_mixlist")
    assert environment_options.apply(options, {"NPU_BRIDGE_OPTIONS": " "}) is options


@pytest.mark.parametrize(
    "value, message",
    [
        ("{", "not valid JSON"),
        ("[1]", "a JSON list is not an object"),
        ('{"precison_mode": "fp16"}', "did you mean 'precision_mode'"),
        ('{"precision_mode": [1]}', "the value of precision_mode is a JSON list"),
        ('{"precision_mode": "bogus"}', "NpuOptimizer option 'precision_mode' has invalid value 'bogus'"),
        ('{"modify_mixlist": "/m.json"}', "NpuOptimizer option 'modify_mixlist' has invalid value '/m.json'"),
    ],
)
def test_a_bad_npu_bridge_options_names_the_variable(value, message):
    with pytest.raises(EnvironmentVariableError) as raised:
        environment_options.apply(parse_values({}, "test"), {"NPU_BRIDGE_OPTIONS": value})
    assert str(raised.value).startswith("NPU_BRIDGE_OPTIONS has invalid value") and message in str(raised.value)


def test_npu_bridge_options_reaches_a_session_without_editing_it(monkeypatch, tmp_path):
    import numpy as np
    import tensorflow as tf
    from helpers.precision import fp16, run_executed

    rng = np.random.RandomState(0)
    a, b = rng.randn(8, 64).astype(np.float32), rng.randn(64, 4).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        left = tf.compat.v1.placeholder(tf.float32, a.shape, name="left")
        product = tf.matmul(left, tf.constant(b), name="product")
    rounded, _ = run_executed(graph, product, {left: a}, precision_mode="allow_fp32_to_fp16")
    np.testing.assert_allclose(rounded, fp16(fp16(a) @ fp16(b)), rtol=1e-3)
    system.shutdown(force=True)  # a graph's first run initializes the system, fixing its init options
    keep = tmp_path / "keep.cfg"
    keep.write_text("product::InputDtype:float32,float32,OutputDtype:float32\n")
    monkeypatch.setenv("NPU_BRIDGE_OPTIONS", json.dumps({"customize_dtypes": str(keep)}))
    kept, _ = run_executed(graph, product, {left: a}, precision_mode="allow_fp32_to_fp16")
    np.testing.assert_allclose(kept, a @ b, rtol=1e-5)
    system.shutdown(force=True)
    monkeypatch.setenv("NPU_BRIDGE_OPTIONS", '{"precison_mode": "force_fp16"}')
    with pytest.raises(EnvironmentVariableError, match="did you mean 'precision_mode'"):
        run_executed(graph, product, {left: a})


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_bisect_names_the_planted_op_and_its_fix_brings_the_loss_back():
    # As an unprivileged user only: bisect needs no privilege, and a second run as root would cost another ~90 s
    user = helpers.unprivileged_users.job_user()
    with user.directory() as tmp_path:
        _bisect_and_fix(user, tmp_path)


def _bisect_and_fix(user, tmp_path):
    out = tmp_path / "out"
    tool = ["-m", "npu_bridge.core.accuracy", "bisect", "--output-dir", str(out), "--", sys.executable, WORKER]
    environment = {"NPU_BRIDGE_DEVICE_TARGET": "ascend", "NPU_BRIDGE_OPTIONS": None}  # as helpers.processes.npu_debug
    result = helpers.unprivileged_users.run_python(user, tmp_path, tool, env=environment, timeout=200, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr  # 1: a finding
    assert helpers.unprivileged_users.not_owned_by(user, out) == {}
    assert not [name for name in os.listdir(tmp_path) if name.startswith("npu-debug-")]  # its work directory is gone
    lines = result.stdout.splitlines()
    runs = [line for line in lines if line.startswith("run ")]
    bound_line = next(line for line in lines if "candidate ops of" in line)
    found = re.search(
        r"(\d+) candidate ops of (\d+) types; at most (\d+) runs to find one culprit, (\d+) for", bound_line
    )
    ops, types, one, bound = map(int, found.groups())
    assert ops >= 200 and types >= 5
    assert one == bisection.FIXED_RUNS + search.bound(types) + 1 + search.bound(ops)  # about 2 log2(ops) + 4
    assert len(runs) <= one <= bound
    assert all(re.match(rf"run {k} of at most {bound}: ", line) for k, line in enumerate(runs[1:], 2))
    assert "culprit op types: MatMul" in result.stdout
    assert f"culprit ops:\n  {CULPRIT} (MatMul)" in result.stdout
    report = (out / bisection.REPORT_FILE).read_text()
    assert CULPRIT in report and "found:" in report
    text = (out / bisection.CUSTOMIZE_FILE).read_text()
    assert text == f"{CULPRIT}::InputDtype:float32,float32,OutputDtype:float32\n"
    assert json.loads((out / bisection.MIXLIST_FILE).read_text()) == {"black-list": {"to-add": ["MatMulV2"]}}

    reference = float(re.search(r"reference \(must_keep_origin_dtype\): metric (\S+)", result.stdout).group(1))
    baseline = float(re.search(r"the script's own precision: metric (\S+)", result.stdout).group(1))
    assert abs(baseline - reference) > 0.1 * reference  # the planted culprit ruins the loss
    options = json.dumps({"customize_dtypes": str(out / bisection.CUSTOMIZE_FILE)})
    fixed = helpers.unprivileged_users.run_python(
        user, tmp_path, [WORKER], env={"NPU_BRIDGE_DEVICE_TARGET": "ascend", "NPU_BRIDGE_OPTIONS": options}, timeout=60
    )
    assert fixed.returncode == 0, fixed.stderr
    loss = metric.find(metric.compile_pattern(metric.DEFAULT_PATTERN), fixed.stdout, "")
    assert metric.within(loss, reference, 1e-2, 0.0), (loss, reference)


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "command, message",
    [
        ([], "no command: give it after --"),
        (
            [sys.executable, "-c", "import sys; print('loss = 1'); sys.exit(3)"],
            "exited with status 3 in run 1 (reference",
        ),
        ([sys.executable, "-c", "print('hello')"], "printed no line matching --metric"),
        (["/nonexistent/train"], "cannot start the command /nonexistent/train"),
    ],
)
def test_bisect_names_a_bad_input_and_exits_2(command, message, tmp_path):
    result = npu_debug(["bisect", "--output-dir", str(tmp_path / "out"), "--", *command], tmp_path, timeout=50)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_stopping_bisect_ends_the_command_and_its_children(tmp_path):
    pids = tmp_path / "pids"
    script = f"sleep 300 & echo $$ $! > {pids}.tmp && mv {pids}.tmp {pids}; wait"
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    tool = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "npu_bridge.core.accuracy",
            "bisect",
            "--output-dir",
            str(tmp_path),
            "--",
            "sh",
            "-c",
            script,
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not pids.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pids.exists(), "the command did not start"
        tool.send_signal(signal.SIGTERM)
        _, err = tool.communicate(timeout=20)
    finally:
        if tool.poll() is None:
            tool.kill()
    assert tool.returncode == 130 and "stopped" in err, err
    for pid in map(int, pids.read_text().split()):
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), f"process {pid} outlived npu-debug"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:  # a zombie waiting for its parent is gone for the user
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
