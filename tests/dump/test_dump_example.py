"""examples/dump_precision_compare.py runs as a user runs it: two dumped runs and their comparison."""

import csv
import os
import re

import pytest
from helpers.paths import REPO_ROOT
from helpers.processes import USER_ENVIRONMENT, noise, run_python

from npu_bridge.core.dump import dump_tree


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_example_dumps_two_runs_and_compares_them(tmp_path):
    result = run_python(
        os.path.join(REPO_ROOT, "examples", "dump_precision_compare.py"),
        args=("--dump-dir", str(tmp_path)),
        env=USER_ENVIRONMENT,
    )
    assert result.returncode == 0, result.stderr
    assert not noise(result.stdout + result.stderr) and result.stderr == "", result.stderr  # its story only
    for run in ("must_keep_origin_dtype", "ascend_default"):
        assert f"{run}: loss " in result.stdout
        found = dump_tree.scan(tmp_path / run)
        assert {a.step for a in found} == {0} and any(a.name.op_name == "hidden_MatMul" for a in found)
    compared = int(re.search(r"compared (\d+) tensors", result.stdout).group(1))
    counts = {key: int(value) for key, value in re.findall(r"(identical|differ|only in my dump): (\d+)", result.stdout)}
    assert compared > 10 and counts["identical"] + counts["differ"] == compared
    # fp16 inputs change the first matrix multiplication and everything after it ...
    assert counts["differ"] > 0 and "first difference: #" in result.stdout
    assert re.search(r"first difference: #\d+ hidden/MatMul output 0", result.stdout)
    # What the example promises: it names the first op whose output diverges (saturated fp16 hidden values).
    assert re.search(r"^first diverging op: #\d+ hidden/\S+ output \d", result.stdout, re.M)
    # ... and the Ascend run also dumps the casts its precision mode inserted.
    ascend_names = {a.name.op_name for a in dump_tree.scan(tmp_path / "ascend_default")}
    assert counts["only in my dump"] > 0 and any("npu_round_fp16" in name for name in ascend_names)
    with open(tmp_path / "compare_result.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert len(rows) == 1 + compared + counts["only in my dump"]
    assert [row[3] for row in rows[1:]].count("hidden/MatMul") == 1
