"""Hangs are named early: two ranks under npu-run, one late at an allreduce or both in different collectives.

Every rank waiting longer than NPU_BRIDGE_STALL_SECONDS reports the collective it waits in and the ranks that have
not arrived, with what they do; npu-run prints one summary for the job; the wait goes on until the timeout. The late
rank's job also runs as an unprivileged user (``helpers.unprivileged_users``), whose ranks share npu-run's status
directory (mode 0700, their files 0600, all theirs) and leave nothing behind.
"""

import os
import re
import sys

import helpers.unprivileged_users
import pytest
from helpers.collectives import launch

STALL_SECONDS = 2

# Rank 1 arrives late at an allreduce ("late SECONDS"), or the ranks run two collectives in opposite orders
# ("crossed"). Lines 11-13 build the collectives the tests look for. A late job's ranks then print what they see of
# npu-run's status directory ("STATUS rank uid [(name, mode, owner)]").
WORKER = '''\
"""A stall worker written by tests/collectives/test_collectives_stall.py."""

import sys
import time

from npu_bridge.npu_init import *  # noqa: F401,F403

sess = tf.Session(config=npu_config_proto())
sess.run(npu_ops.initialize_system())
rank = get_rank_id()
warm = hccl_ops.allreduce(tf.ones([2]), "sum")
late = hccl_ops.allreduce(tf.ones([6]) * (rank + 1), "sum")
gathered = hccl_ops.allgather(tf.ones([3], tf.int32), 2)
sess.run(warm)
if sys.argv[1] == "late":
    if rank == 1:
        time.sleep(float(sys.argv[2]))
    print("SUM", sess.run(late).tolist(), flush=True)
    import os  # here: the lines above keep their numbers

    status = os.environ["NPU_RUN_STATUS_DIR"]
    names = ["."] + sorted(n for n in os.listdir(status) if n.startswith("rank") and n.endswith(".json"))
    seen = [(n, os.stat(os.path.join(status, n))) for n in names]
    print("STATUS", rank, os.getuid(), [(n, oct(s.st_mode & 0o777), s.st_uid) for n, s in seen], flush=True)
else:
    for op in (late, gathered) if rank == 0 else (gathered, late):
        sess.run(op)
'''

ALLREDUCE = r"HcomAllReduce_1 \(allreduce, group 'hccl_world_group', ranks \[0, 1\], float32 \[6\]\) created at \S+:12"
ALLGATHER = r"HcomAllGather \(allgather, group 'hccl_world_group', ranks \[0, 1\], int32 \[3\]\) created at \S+:13"
WARM = r"HcomAllReduce \(allreduce, group 'hccl_world_group', ranks \[0, 1\], float32 \[2\]\) created at \S+:11"


def _worker(tmp_path):
    path = tmp_path / "stall_worker.py"
    path.write_text(WORKER)
    return str(path)


def _summaries(stderr):
    return [line for line in stderr.splitlines() if re.match(r"npu-run: job \S+: \d+ ranks? stalled", line)]


@pytest.mark.slow
@pytest.mark.timeout(150)
@pytest.mark.parametrize("who", ["root", "unprivileged user"])
def test_a_late_rank_is_named_by_the_waiting_rank_and_by_one_summary(who):
    user = helpers.unprivileged_users.chosen(who)
    with user.directory() as tmp_path:
        worker = _worker(tmp_path)
        os.chown(worker, user.uid, user.gid)
        env = {"NPU_BRIDGE_STALL_SECONDS": str(STALL_SECONDS), "HCCL_EXEC_TIMEOUT": "60", "HCCL_CONNECT_TIMEOUT": "120"}
        launcher = ["-n", "2", "--stop-timeout", "5", "--", sys.executable, worker, "late", "7"]
        result = helpers.unprivileged_users.run_python(
            user, tmp_path, ["-m", "npu_bridge.core.launch", *launcher], env=env, timeout=120
        )
        assert result.returncode == 0, result.stderr[-4000:]
        # npu-run removed its work directory in TMPDIR, the status directory with it
        assert not [name for name in os.listdir(tmp_path) if name.startswith("npu-run-")], os.listdir(tmp_path)
        assert helpers.unprivileged_users.not_owned_by(user, tmp_path) == {}
    for rank in (0, 1):  # each rank saw npu-run's status directory and both ranks' files as documented
        seen = re.search(rf"^\[rank {rank}\] STATUS {rank} (\d+) (.*)$", result.stdout, re.M)
        assert seen and int(seen.group(1)) == user.uid, result.stdout
        expected = [(".", "0o700", user.uid), ("rank0.json", "0o600", user.uid), ("rank1.json", "0o600", user.uid)]
        assert seen.group(2) == repr(expected), seen.group(2)
    assert result.stdout.count("SUM [3.0, 3.0, 3.0, 3.0, 3.0, 3.0]") == 2, result.stdout
    reports = [line for line in result.stderr.splitlines() if "stalled for" in line]
    assert len(reports) == 1 and reports[0].startswith("[rank 0] "), result.stderr[-4000:]
    assert re.search(
        rf"rank 0: stalled for [0-9.]+ s in {ALLREDUCE} in <module>, step 2; not arrived: rank 1: not in a "
        rf"collective; last finished {WARM} in <module>, step 1, [0-9.]+ s ago\. Still waiting, until the "
        r"collective timeout of 60 s",
        reports[0],
    ), reports[0]
    assert len(_summaries(result.stderr)) == 1, result.stderr[-4000:]
    block = result.stderr[result.stderr.index(_summaries(result.stderr)[0]) :]
    assert re.search(
        rf"1 rank stalled in collectives \(waiting longer than NPU_BRIDGE_STALL_SECONDS=2 s\); the job keeps "
        rf"waiting until the collective timeout \(60 s.*\n  {ALLREDUCE} in <module>, step 2\n"
        r"    waiting: rank 0 \(for [0-9.]+ s\)\n    not arrived: rank 1\n"
        rf"      rank 1: not in a collective; last finished {WARM}",
        block,
    ), block[:3000]


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_ranks_waiting_in_different_collectives_are_both_named(tmp_path):
    env = {"NPU_BRIDGE_STALL_SECONDS": str(STALL_SECONDS), "HCCL_EXEC_TIMEOUT": "10"}
    result, _ = launch(_worker(tmp_path), 2, ["crossed"], env=env, timeout=120)
    assert result.returncode == 1, result.stderr[-4000:]  # the collective timeout ends the job, as before
    lines = result.stderr.splitlines()
    rank0 = [line for line in lines if line.startswith("[rank 0] ") and "stalled for" in line]
    rank1 = [line for line in lines if line.startswith("[rank 1] ") and "stalled for" in line]
    assert len(rank0) == 1 and len(rank1) == 1, result.stderr[-4000:]
    assert re.search(rf"in {ALLREDUCE}.*; not arrived: rank 1: waiting in {ALLGATHER}", rank0[0]), rank0[0]
    assert re.search(rf"in {ALLGATHER}.*; not arrived: rank 0: waiting in {ALLREDUCE}", rank1[0]), rank1[0]
    summaries = _summaries(result.stderr)
    assert summaries == [summaries[0]] and "2 ranks stalled" in summaries[0], result.stderr[-4000:]
    block = result.stderr[result.stderr.index(summaries[0]) :]
    assert re.search(
        rf"\n  {ALLREDUCE}.*\n    waiting: rank 0 .*\n    not arrived: rank 1\n      rank 1: waiting in {ALLGATHER}",
        block,
    ), block[:3000]
    assert re.search(
        rf"\n  {ALLGATHER}.*\n    waiting: rank 1 .*\n    not arrived: rank 0\n      rank 0: waiting in {ALLREDUCE}",
        block,
    ), block[:3000]
    assert "did not finish within the collective timeout of 10 s" in result.stderr
