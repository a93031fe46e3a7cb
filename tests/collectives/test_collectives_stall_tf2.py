"""Hangs are named early in TF2 too: a tf.function whose collectives wait for a late rank (npu_device, npu-run)
is reported like a session run, with its collective, its source line and its call as the step."""

import re

import pytest
from helpers.collectives import launch

# Line 14 builds the allreduce the test looks for.
WORKER = '''\
"""A TF2 stall worker written by tests/collectives/test_collectives_stall_tf2.py."""

import sys
import time

import tensorflow as tf

import npu_device

npu_device.open().as_default()
rank = npu_device.global_npu_ctx().worker_id
@tf.function
def step(x):
    return npu_device.distribute.all_reduce(x * (rank + 1), "sum")
for call in range(3):
    if call == 2 and rank == 1:
        time.sleep(float(sys.argv[1]))
    print("SUM", step(tf.ones([6])).numpy().tolist(), flush=True)
'''


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_a_late_rank_in_a_tf_function_is_named_by_the_waiting_rank_and_by_npu_run(tmp_path):
    worker = tmp_path / "stall_tf2_worker.py"
    worker.write_text(WORKER)
    env = {"NPU_BRIDGE_STALL_SECONDS": "2", "HCCL_EXEC_TIMEOUT": "60"}
    result, _ = launch(str(worker), 2, ["7"], env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.count("SUM [3.0, 3.0, 3.0, 3.0, 3.0, 3.0]") == 6, result.stdout
    reports = [line for line in result.stderr.splitlines() if "stalled for" in line]
    assert len(reports) == 1 and reports[0].startswith("[rank 0] "), result.stderr[-4000:]
    assert re.search(
        r"rank 0: stalled for [0-9.]+ s in \S+ \(allreduce, group 'hccl_world_group', ranks \[0, 1\], float32 \[6\]\) "
        rf"created at {re.escape(str(worker))}:14 in step, step 2; not arrived: rank 1: not in a collective; last "
        r"finished \S+ \(allreduce.*step 1, [0-9.]+ s ago",
        reports[0],
    ), reports[0]
    assert re.search(r"npu-run: job \S+: 1 rank stalled in collectives", result.stderr), result.stderr[-4000:]
