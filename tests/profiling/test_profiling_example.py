"""examples/profiling.py runs as a user runs it and leaves a complete profile."""

import glob
import os

import pytest
from helpers.paths import REPO_ROOT
from helpers.processes import USER_ENVIRONMENT, noise, run_python
from helpers.profiling import read_csv, the_profile


@pytest.mark.slow
@pytest.mark.op_types
@pytest.mark.timeout(240)
def test_profiling_example_writes_summaries_timeline_and_report(tmp_path):
    output = tmp_path / "profile"
    result = run_python(
        os.path.join(REPO_ROOT, "examples", "profiling.py"),
        args=("--output", str(output), "--loops", "3", "--ascend"),
        env=USER_ENVIRONMENT,
        timeout=200,
    )
    assert result.returncode == 0, result.stderr
    assert not noise(result.stdout + result.stderr), result.stderr  # no TensorFlow log lines, no warnings
    assert "trained 15 steps" in result.stdout
    assert "15 iterations of graph" in result.stderr and "estimated Ascend 910 compute per iteration" in result.stderr
    profile = the_profile(output)
    _, steps = read_csv(profile, "step_trace")
    assert [int(row["Iteration ID"]) for row in steps] == list(range(1, 16))
    _, stats = read_csv(profile, "op_statistic")
    assert {"Conv2D", "Conv2DBackpropFilter", "MaxPool"} <= {row["OP Type"] for row in stats}
    assert glob.glob(os.path.join(profile, "mindstudio_profiler_output", "msprof_*.json"))
    assert os.path.isfile(os.path.join(profile, "report.html"))
