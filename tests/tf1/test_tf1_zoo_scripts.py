"""Training scripts written the way the model zoo writes them run unchanged under ``python -m npu_bridge.tf1``
and learn: ``examples/tf1_tpu_classifier.py`` (BERT's run_classifier pattern, with and without ``--use_tpu``) and
``tests/data/tf1/scripts/queue_input_train.py``, a queue-input trainer (string_input_producer, shuffle_batch,
contrib.layers, contrib.opt, an NpuOptimizer session)."""

import os
import subprocess
import sys

import pytest
from helpers.collectives import parse_results
from helpers.paths import REPO_ROOT, TESTS_DIR

SCRIPTS = os.path.join(TESTS_DIR, "data", "tf1", "scripts")
EXAMPLES = os.path.join(REPO_ROOT, "examples")


def _run_script(path, tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]), TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("NPU_BRIDGE_TF1", None)
    argv = [sys.executable, "-m", "npu_bridge.tf1", path, *args]
    result = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=280, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    lines = "\n".join(f"[rank 0] {line}" for line in result.stdout.splitlines())
    return parse_results(lines)[0], result.stderr


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("use_tpu", ["false", "true"])
def test_a_tpu_estimator_classifier_trains_evaluates_and_predicts(tmp_path, use_tpu):
    results, stderr = _run_script(
        os.path.join(EXAMPLES, "tf1_tpu_classifier.py"),
        tmp_path,
        f"--output_dir={tmp_path / 'out'}",
        f"--use_tpu={use_tpu}",
    )
    run = results["tpu_classifier"]
    assert run["global_step"] == 40
    assert run["accuracy"] > 0.8  # separable data: 40 Adam steps learn it (chance is 0.5)
    assert run["predictions"] == 64 and abs(run["probability_sum"] - 64.0) < 1e-3
    assert sorted(os.listdir(tmp_path / "out"))[:2] == ["checkpoint", "eval"]
    told = "TPUEstimator(use_tpu=True): there is no TPU here"
    assert (told in stderr) is (use_tpu == "true")
    assert ("CrossShardOptimizer runs as one replica here" in stderr) is (use_tpu == "true")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_queue_input_script_trains_with_contrib_layers_and_contrib_opt(tmp_path):
    results, _ = _run_script(os.path.join(SCRIPTS, "queue_input_train.py"), tmp_path, f"--data_dir={tmp_path}")
    run = results["queue_train"]
    assert len(run["losses"]) == 30
    assert sum(run["losses"][-5:]) < 0.5 * sum(run["losses"][:5])
    assert run["checkpoint"] == "model.ckpt-30"
    assert (tmp_path / "model.ckpt-30.index").exists()
