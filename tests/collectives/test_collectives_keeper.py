"""Ranks started one process per rank without npu-run get the job's shared-memory segment from the first rank of
their host (npu_bridge/core/collectives/shm_keeper.py). That the four scheduler sources reduce through it, as root
and as an unprivileged user, is checked in tests/world/test_world_scheduler_jobs.py; here: Ascend's own loop over
RANK_ID with a rank table, and what goes wrong."""

import json
import os
import socket
import sys

import helpers.unprivileged_users
import pytest
from helpers.collectives import Ranks, parse_results
from helpers.paths import WORKERS

from npu_bridge.core.collectives import shm_keeper
from npu_bridge.core.launch import plan
from npu_bridge.core.world import scheduler_env, world

LAUNCH = os.path.join(WORKERS, "scheduler_launch.py")
sys.path.insert(0, WORKERS)
import scheduler_launch  # noqa: E402  (the variables its ranks get, to name their keeper's socket)

sys.path.remove(WORKERS)


def test_the_socket_name_is_the_jobs_on_this_host_and_the_users():
    def name(rank, uid=1000, **extra):
        env = {"RANK_ID": str(rank), "RANK_SIZE": "2", "HCCL_IF_BASE_PORT": "61000", **extra}
        return shm_keeper.socket_name(world.load_world(env), env, uid=uid)

    assert name(0) == name(1)  # both ranks of the job meet at one name
    assert name(0).startswith(b"\0npu_bridge-shm-1000-")  # abstract: no file; the user's id in it
    assert name(0, uid=1001) != name(0)  # another user's job of the same shape
    assert name(0, JOB_ID="7") != name(0) and name(0, HCCL_IF_BASE_PORT="62000") != name(0)  # another job
    single = world.load_world({"RANK_ID": "0", "RANK_SIZE": "1"})
    assert not shm_keeper.needed(single, {})  # one rank on the host: nothing to share
    two = world.load_world({"RANK_ID": "0", "RANK_SIZE": "2", "HCCL_IF_BASE_PORT": "61000"})
    assert shm_keeper.needed(two, {})
    assert not shm_keeper.needed(two, {"NPU_BRIDGE_SHM_FD": "5"})  # npu-run's ranks, or a process a rank started
    assert not shm_keeper.needed(two, {"NPU_BRIDGE_COLLECTIVES": "tf"})


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_ranks_a_shell_loop_starts_with_a_rank_table_reduce_through_the_segment(tmp_path):
    """What train_full_8p.sh does: RANK_TABLE_FILE, and RANK_ID for each process it starts in the background."""
    devices = [{"device_id": str(r), "device_ip": "127.0.0.1", "rank_id": str(r)} for r in range(2)]
    table = {"server_count": "1", "server_list": [{"server_id": "127.0.0.1", "device": devices}], "status": "completed"}
    (tmp_path / "rank_table.json").write_text(json.dumps(dict(table, version="1.0")))
    env = {"RANK_TABLE_FILE": str(tmp_path / "rank_table.json"), "HCCL_CONNECT_TIMEOUT": "90"}
    with Ranks("allreduce_worker.py", 2, plan.find_free_ports(2), [], env, tmp_path, "keeper") as ranks:
        ended = ranks.wait([0, 1], timeout=150)
        outputs = [ranks.output(r) for r in (0, 1)]
    assert [ended[r][0] for r in (0, 1)] == [0, 0], outputs
    results = parse_results("\n".join(f"[rank {r}] {line}" for r in (0, 1) for line in outputs[r].splitlines()))
    assert [results[r]["ops"] for r in (0, 1)] == [["HcomShmAllReduce"], ["HcomShmAllReduce"]]
    assert [results[r]["sum"] for r in (0, 1)] == [[3.0], [3.0]]


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_a_keeper_socket_held_by_another_user_stops_the_ranks_with_its_owner_named():
    root = helpers.unprivileged_users.as_root()  # the squatter
    user = helpers.unprivileged_users.job_user()
    port_base = plan.find_free_ports(2)
    inherited = ("RANK_ID", "RANK_SIZE", "NPU_RUN_NETWORK", *scheduler_env.SCHEDULER_VARIABLES)
    env = {k: v for k, v in os.environ.items() if k not in inherited and not k.startswith("VC_")}
    env.update(HCCL_IF_BASE_PORT=str(port_base), **scheduler_launch.scheduler_variables("torchrun", 0, 2))
    squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        squatter.bind(shm_keeper.socket_name(world.load_world(env), env, uid=user.uid))
        squatter.listen(8)
        with user.directory() as tmp_path:
            result = helpers.unprivileged_users.run_python(
                user,
                tmp_path,
                [LAUNCH, "torchrun", "2", str(port_base), os.path.join(WORKERS, "allreduce_worker.py")],
                env={"HCCL_CONNECT_TIMEOUT": "60", "RANK_ID": None, "RANK_SIZE": None, "NPU_RUN_NETWORK": None},
                timeout=180,
            )
    finally:
        squatter.close()
    assert result.returncode not in (0, 124), result.stdout[-4000:]
    for rank in (0, 1):
        assert (
            f"rank {rank}: the segment keeper's socket of this job is held by pid {os.getpid()} of user "
            f"{root.uid}, not by a process of yours (user {user.uid})"
        ) in result.stdout, result.stdout[-4000:]


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_a_rank_whose_hosts_first_rank_never_starts_fails_within_the_connect_timeout(tmp_path):
    port_base = plan.find_free_ports(2)
    with Ranks("allreduce_worker.py", 2, port_base, [], {"HCCL_CONNECT_TIMEOUT": "5"}, tmp_path, "keeper") as ranks:
        ranks.processes[0].kill()  # the first rank, the keeper, never gets to start it
        ended = ranks.wait([1], timeout=120)
        output = ranks.output(1)
    assert ended and ended[1][0] != 0, output[-3000:]
    assert (
        "rank 1: the first rank of this host (rank 0) did not hand out the job's shared-memory segment within 5 s "
        "(HCCL_CONNECT_TIMEOUT)"
    ) in output, output[-3000:]


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_the_other_ranks_end_when_the_keeper_rank_dies_and_the_segment_outlives_it(tmp_path):
    env = {"HCCL_EXEC_TIMEOUT": "20", "HCCL_CONNECT_TIMEOUT": "90"}
    with Ranks("fault_worker.py", 2, plan.find_free_ports(2), ["kill", "0"], env, tmp_path, "keeper") as ranks:
        ended = ranks.wait([1], timeout=120)
        output = ranks.output(1)
    assert ended and ended[1][0] != 0, output[-3000:]
    assert "HcomShmAllReduce" in output, output[-3000:]  # rank 1 ran its steps on the keeper's segment
    error = parse_results("\n".join(f"[rank 1] {line}" for line in output.splitlines()))[1]["error"]
    assert "rank 0" in error, error
