"""examples/dump_precision_compare.py runs as a user runs it: two dumped runs and their comparison."""

import csv
import os
import re

import pytest
from conftest import REPO_ROOT, run_python

from npu_bridge.dump import dump_tree


@pytest.mark.timeout(300)
def test_the_example_dumps_two_runs_and_compares_them(tmp_path):
    result = run_python(os.path.join(REPO_ROOT, "examples", "dump_precision_compare.py"),
                        args=("--dump-dir", str(tmp_path)))
    assert result.returncode == 0, result.stderr
    for run in ("must_keep_origin_dtype", "ascend_default"):
        assert f"{run}: loss " in result.stdout
        found = dump_tree.scan(tmp_path / run)
        assert {a.step for a in found} == {0} and any(a.name.op_name == "hidden_MatMul" for a in found)
    compared = int(re.search(r"compared (\d+) tensors", result.stdout).group(1))
    assert compared > 10
    assert "first diverging op: #" in result.stdout or "no op diverges" in result.stdout
    with open(tmp_path / "compare_result.csv", newline="", encoding="utf-8") as f:
        assert len(list(csv.reader(f))) == compared + 1
