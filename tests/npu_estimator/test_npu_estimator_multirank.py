"""NPUEstimator in a 2-rank job: ranks start from different weights and see different data, yet end equal
(variables broadcast from rank 0, gradients averaged), with iterations_per_loop > 1."""

import helpers.collectives
import numpy as np
import pytest


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ranks_train_the_same_model(tmp_path):
    result, per_rank = helpers.collectives.launch(
        "estimator_worker.py", 2, args=[str(tmp_path)], env={"JOB_ID": "10086"}
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert per_rank[0]["global_step"] == per_rank[1]["global_step"] == 10
    np.testing.assert_allclose(per_rank[0]["w"], per_rank[1]["w"], rtol=1e-6)
