"""A job started the way a scheduler starts it (one process per rank, only the scheduler's variables, no npu-run)
forms its world and runs a collective through the shared-memory segment its host's first rank keeps, as root and
as an unprivileged user."""

import os

import helpers.unprivileged_users
import pytest
from helpers.collectives import parse_results
from helpers.paths import WORKERS

from npu_bridge.core.launch import plan

LAUNCH = os.path.join(WORKERS, "scheduler_launch.py")


@pytest.mark.slow
@pytest.mark.timeout(200)
@pytest.mark.parametrize(
    "source, who",
    [("slurm", "unprivileged user"), ("torchrun", "root"), ("tf_config", "root"), ("volcano", "unprivileged user")],
)
def test_ranks_a_scheduler_starts_form_the_world_and_reduce(source, who):
    user = helpers.unprivileged_users.chosen(who)
    port_base = plan.find_free_ports(2)
    with user.directory() as tmp_path:
        result = helpers.unprivileged_users.run_python(
            user,
            tmp_path,
            [LAUNCH, source, "2", str(port_base), os.path.join(WORKERS, "allreduce_worker.py")],
            env={"HCCL_CONNECT_TIMEOUT": "120", "RANK_ID": None, "RANK_SIZE": None, "NPU_RUN_NETWORK": None},
            timeout=180,
        )
        assert helpers.unprivileged_users.not_owned_by(user, tmp_path) == {}
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    results = parse_results(result.stdout)
    # rank, size, local rank, local size, device: every rank on this machine
    assert [results[r]["world"] for r in (0, 1)] == [[0, 2, 0, 2, 0], [1, 2, 1, 2, 1]]
    assert [results[r]["sum"] for r in (0, 1)] == [[3.0], [3.0]]
    # without npu-run, the ranks got the segment from the first rank's keeper and reduced through it
    assert [results[r]["ops"] for r in (0, 1)] == [["HcomShmAllReduce"], ["HcomShmAllReduce"]]
    # on one machine their servers listen on 127.0.0.1 and serve this user alone: no rank warns
    assert "without authentication" not in result.stdout + result.stderr, result.stdout[-4000:]
