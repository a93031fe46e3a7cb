"""Data-parallel training helpers across 2 real ranks (tests/workers/training_worker.py), and the example:
its weights after N steps on 2 and on 4 ranks, on both collective paths, equal a one-process run on the same
global batches."""

import os
import re

import numpy as np
import pytest
from helpers.collectives import launch
from helpers.paths import REPO_ROOT
from helpers.processes import USER_ENVIRONMENT, noise, run_python

EXAMPLE = os.path.join(REPO_ROOT, "examples", "distributed_training.py")
EXAMPLE_ARGS = ["--steps", "12", "--output"]


def _sgd_reference(steps=3, lr=0.01):
    """NPUDistributedOptimizer(SGD) in dense_model: rank r's loss is sum((x_r W + b)^2), x_r = (r + 1)."""
    w, b = np.arange(6, dtype=np.float64).reshape(2, 3), np.ones(3)
    for _ in range(steps):
        grads = []
        for rank in range(2):
            x = np.full((4, 2), rank + 1.0)
            residual = 2 * (x @ w + b)
            grads.append((x.T @ residual, residual.sum(axis=0)))
        w = w - lr * (grads[0][0] + grads[1][0]) / 2
        b = b - lr * (grads[0][1] + grads[1][1]) / 2
    return w, b


def _keras_reference(initial, data, steps=3, lr=0.1):
    """Full-batch SGD on both ranks' samples (mse), from rank 0's initial weights."""
    kernel, bias = (np.array(v, np.float64) for v in initial)
    x = np.concatenate([np.array(d[0]) for d in data])
    y = np.concatenate([np.array(d[1]) for d in data])
    for _ in range(steps):
        error = 2 * (x @ kernel + bias - y) / y.size
        kernel, bias = kernel - lr * x.T @ error, bias - lr * error.sum(axis=0)
    return kernel, bias


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_distributed_helpers_on_two_ranks():
    result, results = launch("training_worker.py", 2, timeout=180)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    r0, r1 = results[0], results[1]
    for name in ("sgd", "adam", "adam_sharded", "adam_wrapped", "embedding", "keras"):
        for a, b in zip(r0[name], r1[name]):
            np.testing.assert_array_equal(a, b, err_msg=name)  # every rank holds the same weights
    for got, want in zip(r0["sgd"], _sgd_reference()):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    for name in ("adam_sharded", "adam_wrapped"):
        for got, want in zip(r0[name], r0["adam"]):
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)
    np.testing.assert_allclose(r0["embedding"], [[-0.5, -1.0], [-1.0, -2.0], [0.0, 0.0], [-4.5, -6.0]])
    assert r0["npu_allreduce_mean"] == r0["module_allreduce"] == r0["module_reduce"] == [1.5, 15.0]
    assert r0["module_allreduce_sum"] == [3.0, 30.0]
    assert r0["npu_allreduce_list"] == [[2.0, 20.0], [1]]
    assert r0["hook_trainable"] == r1["hook_trainable"] == [0.0, 1.0]  # rank 0's values
    assert (r0["hook_not_trainable"], r1["hook_not_trainable"]) == ([0.0], [1.0])  # trainable variables only
    assert r0["function_from_1"] == r1["function_from_1"] == [5.0, 6.0]
    assert r0["keras_initial"] != r1["keras_initial"]  # the callback made them equal
    kernel, bias = _keras_reference(r0["keras_initial"], [r0["keras_data"], r1["keras_data"]])
    np.testing.assert_allclose(r0["keras"][0], kernel, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(r0["keras"][1], bias, rtol=1e-4, atol=1e-6)


@pytest.fixture(scope="module")
def one_process_run(tmp_path_factory):
    """The example in one process on the same global batches: (its stdout, the weights file)."""
    weights = tmp_path_factory.mktemp("one_process") / "one.npz"
    single = run_python(EXAMPLE, args=[*EXAMPLE_ARGS, str(weights)], env=USER_ENVIRONMENT, timeout=120)
    assert single.returncode == 0, single.stderr
    assert single.stderr == "" and single.stdout.startswith("rank 0 of 1: 32 of 32 samples per step\n")
    return single.stdout, weights


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("path", ["shm", "tf"])  # NPU_BRIDGE_COLLECTIVES: the job's shared memory, TensorFlow's gRPC
@pytest.mark.parametrize("size", [2, 4])
def test_example_on_several_ranks_matches_one_process(size, path, one_process_run, tmp_path):
    several = tmp_path / "several.npz"
    # The job in the environment a user has (none of the tests' TF_CPP_MIN_LOG_LEVEL=2).
    env = dict(USER_ENVIRONMENT, NPU_BRIDGE_COLLECTIVES=path)
    result, _ = launch(EXAMPLE, size, args=[*EXAMPLE_ARGS, str(several)], env=env, timeout=200)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert f"[rank 1] rank 1 of {size}: {32 // size} of 32 samples per step" in result.stdout
    # Each rank prints its story only: no TensorFlow start-up or server lines, no "Local rendezvous is aborting"
    # warnings of TensorFlow's per-step cleanup, no tf.layers deprecation warnings.
    assert not noise(result.stdout + result.stderr), result.stdout[-4000:] + result.stderr[-4000:]
    assert "rendezvous" not in result.stdout + result.stderr
    single_stdout, one = one_process_run
    losses = [re.findall(r"step (\d+): loss ([0-9.]+)", out) for out in (result.stdout, single_stdout)]
    assert losses[0] and losses[0] == losses[1]  # the printed loss is the global batch's on every rank count
    with np.load(several) as a, np.load(one) as b:
        assert sorted(a.files) == sorted(b.files) == ["hidden/bias", "hidden/kernel", "out/bias", "out/kernel"]
        for name in a.files:
            np.testing.assert_allclose(a[name], b[name], rtol=1e-5, atol=1e-6, err_msg=name)
