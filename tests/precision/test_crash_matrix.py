"""No crash, whatever a real script sets: every precision mode x backend (x instrumentation, for one mode of each
kind of rewrite on the simulated Ascend backend, two on cpu) trains the graph shapes of real Ascend scripts (dense
softmax classifier with dropout, conv net with batch norm and pooling, GRU/LSTM cells, DynamicRNN, unique + gather
embedding, cond and while loops, integer and string ops) in a child process that must exit 0, with finite falling
losses and the mode's precision visible in a MatMul's values.
"""

import json

import pytest
from helpers.paths import REPO_ROOT
from helpers.processes import run_python

WORKER = f"{REPO_ROOT}/tests/workers/crash_matrix_worker.py"
FP32_ERROR = 1e-5  # float32 roundoff of a 20-long dot product, relative to the largest value
FP16_ERROR = (1e-5, 5e-3)  # inputs (and maybe the output) rounded through fp16: 2**-11 relative
BF16_ERROR = (5e-4, 4e-2)  # through bfloat16: 2**-8 relative


def expected_precision(mode, backend):
    """The precision a MatMul computes in: "fp32", "fp16" or "bf16"."""
    value = mode.split("=", 1)[1]
    if value == "None":
        return "fp16" if backend == "ascend" else "fp32"  # the simulated backend's default allow_fp32_to_fp16
    if value in ("must_keep_origin_dtype", "origin", "allow_fp32_to_bf16"):
        return "fp32"
    return "bf16" if "bf16" in value or "bfloat16" in value else "fp16"


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("backend", ["cpu", "ascend"])
def test_every_precision_mode_and_instrumentation_trains_real_graph_shapes(backend, tmp_path):
    result = run_python(WORKER, args=(backend, str(tmp_path)), timeout=840)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    # every precision_mode (v1 and v2, and unset) plain, and one of each kind of rewrite (two on cpu) with overflow
    # and with dump
    assert len(lines) == 15 + (2 if backend == "cpu" else 7) * 2
    for line in lines:
        where = f"{line['mode']} {line['instrumentation']} on {backend}"
        for shape, before in line["losses_before"].items():
            after = line["losses_after"][shape]
            assert after == after and abs(after) != float("inf"), (where, shape, after)
            assert after < before, (where, shape, before, after)
        precision, error = expected_precision(line["mode"], backend), line["matmul_error"]
        if precision == "fp32":
            assert error < FP32_ERROR, (where, error)
        else:
            low, high = FP16_ERROR if precision == "fp16" else BF16_ERROR
            assert low < error < high, (where, precision, error)
