"""Faults in a multi-rank job: a rank that dies or hangs, ranks that never arrive, a port in use. Every rank
must fail with a clear error and a non-zero exit code within the timeout, never hang."""

import re
import socket

import pytest
from helpers.collectives import Ranks, parse_results
from helpers.processes import run_python

from npu_bridge.core.collectives import watchdog
from npu_bridge.core.launch import plan

EXEC_TIMEOUT = 20


def _fault_time(ranks, victim):
    match = re.search(r"FAULT ([0-9.]+)", ranks.output(victim))
    assert match, ranks.output(victim)[-3000:]
    return float(match.group(1))


PATHS = pytest.mark.parametrize("shared_memory", [False, True], ids=["grpc", "shm"])


@pytest.mark.slow
@pytest.mark.timeout(150)
@PATHS
@pytest.mark.parametrize("victim", [0, 1], ids=["leader-dies", "rank-dies"])
def test_every_other_rank_exits_non_zero_when_a_rank_dies(victim, shared_memory, tmp_path):
    size = 3
    env = {"HCCL_EXEC_TIMEOUT": str(EXEC_TIMEOUT), "HCCL_CONNECT_TIMEOUT": "90"}
    args = ["kill", str(victim)]
    with Ranks("fault_worker.py", size, plan.find_free_ports(size), args, env, tmp_path, shared_memory) as ranks:
        survivors = [r for r in range(size) if r != victim]
        ended = ranks.wait(survivors, timeout=120)
        outputs = {r: ranks.output(r) for r in range(size)}
        assert sorted(ended) == survivors, outputs
        fault = _fault_time(ranks, victim)
        for rank in survivors:
            code, when = ended[rank]
            assert code in (1, watchdog.EXIT_CODE), (code, outputs[rank][-3000:])
            assert when - fault < EXEC_TIMEOUT, outputs[rank][-3000:]
            assert f"rank {victim}" in outputs[rank], outputs[rank][-3000:]
            assert ("HcomShmAllReduce" in outputs[rank]) == shared_memory, outputs[rank][-3000:]


@pytest.mark.slow
@pytest.mark.timeout(150)
@PATHS
def test_a_hung_rank_times_out_the_others_and_later_collectives_fail_fast(shared_memory, tmp_path):
    size, timeout = 2, 6
    env = {"HCCL_EXEC_TIMEOUT": str(timeout), "HCCL_CONNECT_TIMEOUT": "90"}
    args = ["hang", "1"]
    with Ranks("fault_worker.py", size, plan.find_free_ports(size), args, env, tmp_path, shared_memory) as ranks:
        ended = ranks.wait([0], timeout=120)
        output = ranks.output(0)
        assert ended and ended[0][0] == 1, output[-3000:]
        assert ended[0][1] - _fault_time(ranks, 1) < timeout + 10
        assert ranks.processes[1].poll() is None  # the hung rank is stuck in user code, not in npu_bridge
    results = parse_results("\n".join(f"[rank 0] {line}" for line in output.splitlines()))[0]
    assert re.match(
        r"rank 0: HcomAllReduce \(allreduce, group 'hccl_world_group', ranks \[0, 1\]\) did not finish "
        rf"within the collective timeout of {timeout} s",
        results["error"],
    ), results["error"]
    assert results["second_error"].startswith(results["error"])
    assert "Collectives cannot run again in this process" in results["second_error"]
    assert results["second_error_seconds"] < 1


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_ranks_that_never_arrive_are_named():
    base = plan.find_free_ports(3)
    result = run_python(
        """
        from npu_bridge.npu_init import *
        tf.Session().run(npu_ops.initialize_system())
    """,
        env={"RANK_SIZE": "3", "RANK_ID": "0", "HCCL_IF_BASE_PORT": str(base), "HCCL_CONNECT_TIMEOUT": "2"},
        timeout=50,
    )
    assert result.returncode == 1
    assert (
        f"CollectiveError: rank 0: ranks 1 (127.0.0.1:{base + 1}), 2 (127.0.0.1:{base + 2}) never arrived "
        "within HCCL_CONNECT_TIMEOUT=2 s"
    ) in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_port_in_use_is_reported():
    base = plan.find_free_ports(2)
    with socket.socket() as blocker:
        blocker.bind(("0.0.0.0", base + 1))
        blocker.listen()
        result = run_python(
            """
            from npu_bridge.npu_init import *
            tf.Session()
        """,
            env={"RANK_SIZE": "2", "RANK_ID": "1", "HCCL_IF_BASE_PORT": str(base)},
            timeout=50,
        )
    assert result.returncode == 1
    assert f"CollectiveError: rank 1: cannot start the collective server on port {base + 1}" in result.stderr
    assert "set HCCL_IF_BASE_PORT" in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_a_tf2_rank_that_dies_ends_the_other_ranks_started_by_hand(tmp_path):
    size, victim = 2, 1
    env = {"HCCL_EXEC_TIMEOUT": str(EXEC_TIMEOUT), "HCCL_CONNECT_TIMEOUT": "90"}
    with Ranks("tf2_fault_worker.py", size, plan.find_free_ports(size), [str(victim)], env, tmp_path) as ranks:
        ended = ranks.wait([0], timeout=120)
        output = ranks.output(0)
        assert list(ended) == [0], output[-3000:]
        assert 'RESULT {"name": "spinning_off", "value": true}' in output  # its eager context's pools do not spin
        code, when = ended[0]
        assert code in (1, watchdog.EXIT_CODE), (code, output[-3000:])
        assert when - _fault_time(ranks, victim) < EXEC_TIMEOUT, output[-3000:]
        assert f"rank {victim}" in output, output[-3000:]
