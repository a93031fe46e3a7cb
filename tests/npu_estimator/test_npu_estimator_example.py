"""examples/npu_estimator.py trains with iterations_per_loop, checkpoints, and resumes, also across runs."""

import os
import re

import pytest
from helpers.paths import REPO_ROOT
from helpers.processes import USER_ENVIRONMENT, noise, run_python

SCRIPT = os.path.join(REPO_ROOT, "examples", "npu_estimator.py")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_npu_estimator_example_trains_and_resumes(tmp_path):
    model_dir = str(tmp_path / "model")
    first = run_python(SCRIPT, args=("--model_dir", model_dir, "--steps", "200"), env=USER_ENVIRONMENT, timeout=200)
    assert first.returncode == 0, first.stderr[-3000:]
    # The Estimator's own INFO log is part of its story; TensorFlow's C++ lines and warnings are not.
    assert not noise(first.stdout + first.stderr), first.stderr[-3000:]
    phase1 = re.search(r"phase 1: global step 0 -> 200, accuracy ([0-9.]+)", first.stdout)
    assert phase1 and float(phase1.group(1)) > 0.9, first.stdout
    assert "phase 2 (resumed): global step 200 -> 400" in first.stdout
    assert "checkpoints: model.ckpt-200, model.ckpt-300, model.ckpt-400" in first.stdout

    again = run_python(SCRIPT, args=("--model_dir", model_dir, "--steps", "20"), timeout=200)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "phase 1: global step 400 -> 420" in again.stdout
    assert "phase 2 (resumed): global step 420 -> 440" in again.stdout
