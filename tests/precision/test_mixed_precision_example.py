"""examples/mixed_precision_loss_scale.py runs as a user runs it: overflowing steps are skipped and it trains."""

import os
import re

import pytest
from helpers.paths import REPO_ROOT
from helpers.processes import USER_ENVIRONMENT, noise, run_python


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_example_skips_overflowing_steps_and_trains():
    result = run_python(
        os.path.join(REPO_ROOT, "examples", "mixed_precision_loss_scale.py"), env=USER_ENVIRONMENT, timeout=240
    )
    assert result.returncode == 0, result.stderr
    assert not noise(result.stdout + result.stderr), result.stderr  # no TensorFlow log lines, no warnings
    assert "step   0  loss scale 2.14748e+09  applied steps 0" in result.stdout  # 2**32 overflows fp16
    match = re.search(r"skipped (\d+) overflowing steps; first loss ([0-9.]+), final loss ([0-9.]+)", result.stdout)
    assert match, result.stdout
    skipped, first, final = int(match.group(1)), float(match.group(2)), float(match.group(3))
    assert 5 <= skipped <= 40
    assert final < first / 10
