"""examples/quickstart.py runs as a user runs it, trains, and prints only its own lines."""

import os
import re

import pytest
from helpers.paths import REPO_ROOT
from helpers.processes import USER_ENVIRONMENT, noise, run_python

_STORY = re.compile(r"rank 0 of 1\n(step +\d+  loss [0-9.]+\n){4}first loss [0-9.]+, final loss [0-9.]+\n")


@pytest.mark.slow
def test_quickstart_trains_and_exits_cleanly():
    # The environment a user has: none of the tests' TF_CPP_MIN_LOG_LEVEL=2.
    result = run_python(os.path.join(REPO_ROOT, "examples", "quickstart.py"), env=USER_ENVIRONMENT)
    assert result.returncode == 0, result.stderr
    # No TensorFlow start-up lines (printed twice by TensorFlow 2.21 itself), no cuInit error on a machine
    # without a CUDA driver, no later C++ INFO lines, no tf.layers deprecation warnings: the story only.
    assert not noise(result.stdout + result.stderr), result.stderr
    assert result.stderr == ""
    assert _STORY.fullmatch(result.stdout), result.stdout
    match = re.search(r"first loss ([0-9.]+), final loss ([0-9.]+)", result.stdout)
    first, final = float(match.group(1)), float(match.group(2))
    assert final < first / 5
