"""Loss scaling across 2 real ranks (tests/workers/loss_scale_worker.py), where rank 1's gradients overflow at
one step. In saturation mode (the simulated Ascend backend) is_distributed sums the float-status register over
the ranks, so every rank skips that step and lowers its loss scale; in INF/NaN mode (CPU) NPULossScaleOptimizer
checks each rank's own gradients, as upstream does, and averaged gradients carry the overflow to every rank."""

import pytest
from helpers.collectives import job_failure, launch

SKIPPED = 1  # the step at which rank 1's gradients overflow
LOWERED = [1024.0, 512.0, 512.0]  # the loss scale after each step when the step was skipped
KEPT = [1024.0, 1024.0, 1024.0]


def weights(history, step):
    return history[step][0]


def scales(history):
    return [entry[1] for entry in history]


def skipped(history):
    """The overflow step changed no weight, the next one did."""
    return weights(history, SKIPPED) == weights(history, SKIPPED - 1) and weights(history, SKIPPED + 1) != weights(
        history, SKIPPED
    )


def run_job(backend):
    result, results = launch("loss_scale_worker.py", 2, env={"NPU_BRIDGE_DEVICE_TARGET": backend}, timeout=220)
    assert result.returncode == 0, job_failure(result)
    return results[0], results[1]


def assert_averaged_runs_skip_together(r0, r1):
    for name in ("averaged", "npu_optimizer"):
        assert r0[name] == r1[name], name  # averaged gradients: the ranks hold the same weights
        assert skipped(r0[name]) and scales(r0[name]) == LOWERED, name


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_saturation_mode_ranks_agree_on_the_float_status():
    r0, r1 = run_job("ascend")
    assert_averaged_runs_skip_together(r0, r1)
    for history in (r0["distributed_status"], r1["distributed_status"]):
        assert skipped(history) and scales(history) == LOWERED
    # Without is_distributed only the overflowing rank skips and lowers its scale.
    assert not skipped(r0["local_status"]) and scales(r0["local_status"]) == KEPT
    assert skipped(r1["local_status"]) and scales(r1["local_status"]) == LOWERED


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_inf_nan_mode_checks_each_ranks_gradients():
    r0, r1 = run_job("cpu")
    assert_averaged_runs_skip_together(r0, r1)
    for name in ("distributed_status", "local_status"):
        assert not skipped(r0[name]) and scales(r0[name]) == KEPT, name
        assert skipped(r1[name]) and scales(r1[name]) == LOWERED, name
