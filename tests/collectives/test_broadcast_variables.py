"""``hccl_ops.broadcast`` writes the root's values into the variables it is given, as HCCL does on the NPU."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.collectives import job_failure, launch

from npu_bridge.hccl import hccl_ops

# What every rank holds after the broadcasts of broadcast_variables_worker.py: the initial values of rank 0
# (start * 1) for the first broadcast (root 0), of rank 1 (start * 2) for the second (root 1).
EXPECTED = {
    "ref_w": np.full([2, 3], 1.0),
    "res_b": np.full([4], 10.0),
    "ref_h": np.full([3], 2.0),
    "ref_t": np.full([2], 200),
    "res_t": np.full([2], 2000.0),
    "by_tensor_result": [[200, 200], [2000.0, 2000.0], [1, 1], [10.0, 10.0]],
}


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_broadcast_leaves_every_ranks_variables_equal_to_the_roots():
    result, results = launch("broadcast_variables_worker.py", 2, timeout=180)
    assert result.returncode == 0, job_failure(result)
    assert sorted(results) == [0, 1]
    for rank in (0, 1):
        for name, want in EXPECTED.items():
            np.testing.assert_array_equal(np.array(results[rank][name]), np.array(want), err_msg=f"rank {rank} {name}")
        # A copy of a variable's value is not a variable: each rank keeps its own.
        np.testing.assert_array_equal(results[rank]["ref_s"], [5.0 * (rank + 1)] * 2, err_msg=f"rank {rank} ref_s")


def test_single_rank_broadcast_of_variables_returns_their_values():
    with tf.Graph().as_default():
        ref = tf.compat.v1.get_variable("ref", [2], initializer=tf.constant_initializer(3.0), use_resource=False)
        res = tf.compat.v1.get_variable("res", [2], initializer=tf.constant_initializer(4.0), use_resource=True)
        out = hccl_ops.broadcast([ref, res, tf.constant([1.0])], 0)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            values = sess.run(out)
    assert [v.tolist() for v in values] == [[3.0, 3.0], [4.0, 4.0], [1.0]]
