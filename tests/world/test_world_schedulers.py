"""Worlds from job schedulers' and launchers' variables (Slurm, torchrun, MPI, TF_CONFIG, Volcano), their notations,
their conflicts, and rank tables a scheduler is still filling in."""

import json
import threading
import time

import pytest

from npu_bridge.core.runtime.errors import NotAvailableError, RankTableError
from npu_bridge.core.world import hostlist, rank_table, world

SLURM_2_NODES = {
    "SLURM_JOB_ID": "4242",
    "SLURM_STEP_ID": "0",
    "SLURM_STEP_NUM_TASKS": "7",
    "SLURM_STEP_NODELIST": "gpu[01-03],cpu7",
    "SLURM_STEP_TASKS_PER_NODE": "2(x3),1",
}


def view(environ):
    w = world.load_world(environ)
    return w.source, w.rank_id, w.rank_size, w.local_rank_id, w.local_rank_size, [r.host for r in w.ranks]


def refused(environ, error=RankTableError):
    with pytest.raises(error) as info:
        world.load_world(environ)
    return str(info.value)


@pytest.mark.parametrize(
    "text, names",
    [
        ("n1", ["n1"]),
        ("n[1-3],m5", ["n1", "n2", "n3", "m5"]),
        ("n[01-03]", ["n01", "n02", "n03"]),
        ("o[3-4,6,7-8]", ["o3", "o4", "o6", "o7", "o8"]),
        ("r[1-2]-n[1-2]", ["r1-n1", "r1-n2", "r2-n1", "r2-n2"]),
        ("10.77.0.[1-2]", ["10.77.0.1", "10.77.0.2"]),
    ],
)
def test_slurm_node_lists_expand_in_order_with_their_padding(text, names):
    assert hostlist.expand_nodes(text) == names


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "an empty node list"),
        ("n[1-", "is not closed"),
        ("n1]", "has no '['"),
        ("n[[1]]", "cannot nest"),
        ("n[3-1]", "runs backwards"),
        ("n[a-b]", "the brackets hold 'a-b', not numbers"),
        ("n1,,n2", "separated by single commas"),
        ("n[]", "empty brackets"),
        ("n[0-99999999]", "more than 65536"),
        ("a[0-999]b[0-999]", "more than 65536 nodes"),
    ],
)
def test_malformed_node_lists_are_named_with_what_is_allowed(text, why):
    with pytest.raises(RankTableError, match="SLURM_STEP_NODELIST has invalid value") as info:
        hostlist.expand_nodes(text)
    assert why in str(info.value)


def test_tasks_per_node_expand_and_refuse_nonsense():
    assert hostlist.expand_counts("2(x3),1") == [2, 2, 2, 1]
    assert hostlist.expand_counts("8") == [8]
    for bad in ("", "2(x)", "0", "2(x0)", "x", "1(x99999999)", "-1", "\uff11"):
        with pytest.raises(RankTableError, match="SLURM_STEP_TASKS_PER_NODE has invalid value"):
            hostlist.expand_counts(bad)


def test_srun_tasks_are_ranks_placed_by_block_or_cyclic_distribution():
    block = view(dict(SLURM_2_NODES, SLURM_PROCID="3", SLURM_NODEID="1", SLURM_LOCALID="1", DEVICE_ID="1"))
    hosts = ["gpu01", "gpu01", "gpu02", "gpu02", "gpu03", "gpu03", "cpu7"]
    assert block == ("slurm", 3, 7, 1, 2, hosts)
    cyclic = dict(SLURM_2_NODES, SLURM_PROCID="4", SLURM_DISTRIBUTION="cyclic:block", DEVICE_ID="0")
    assert view(cyclic)[5] == ["gpu01", "gpu02", "gpu03", "cpu7", "gpu01", "gpu02", "gpu03"]
    w = world.load_world(dict(SLURM_2_NODES, SLURM_PROCID="6"))
    assert (w.job_id, w.device_id, w.server_id) == ("4242", 0, "cpu7")
    assert "SLURM_PROCID='6'" in w.source_variables


def test_a_one_node_step_runs_on_loopback_and_each_task_gets_its_local_device():
    one = {
        "SLURM_STEP_ID": "0",
        "SLURM_STEP_NUM_TASKS": "2",
        "SLURM_STEP_NODELIST": "n1",
        "SLURM_STEP_TASKS_PER_NODE": "2",
    }
    w = world.load_world(dict(one, SLURM_PROCID="1"))
    assert (w.source, w.rank_id, w.device_id, [r.host for r in w.ranks]) == ("slurm", 1, 1, ["127.0.0.1"] * 2)


def test_a_batch_script_s_own_process_is_not_a_rank():
    # sbatch's shell has SLURM_PROCID=0 and SLURM_NTASKS, but no step: a python run there is a world of one
    assert view({"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_JOB_NODELIST": "n[1-4]"})[0] == "single"


def _plane(count, nodes, size, **more):
    """The nodes of every task of a step of ``count`` tasks over ``nodes`` nodes under plane=``size``, with the tasks
    per node srun gives (blocks of ``size`` to each node in turn)."""
    counts, left = [0] * nodes, count
    while left:
        for i in range(nodes):
            counts[i] += min(size, left)
            left -= min(size, left)
    env = {
        "SLURM_STEP_ID": "0",
        "SLURM_PROCID": "0",
        "SLURM_STEP_NUM_TASKS": str(count),
        "SLURM_STEP_NODELIST": f"n[1-{nodes}]",
        "SLURM_STEP_TASKS_PER_NODE": ",".join(str(c) for c in counts),
        "SLURM_DISTRIBUTION": "plane",
        "SLURM_DIST_PLANESIZE": str(size),
        "DEVICE_ID": "0",
    }
    env.update(more)
    return view(env)[5]


def test_srun_tasks_under_a_plane_distribution_go_in_blocks_to_each_node_in_turn():
    # Slurm's own example: 21 tasks on 4 nodes with plane=4 (tasks 0-3 on n1, 4-7 on n2, ..., 16-19 on n1, 20 on n2)
    hosts = _plane(21, 4, 4)
    assert [hosts.count(f"n{i}") for i in range(1, 5)] == [8, 5, 4, 4]
    assert hosts[:4] == ["n1"] * 4 and hosts[4:8] == ["n2"] * 4 and hosts[16:20] == ["n1"] * 4 and hosts[20] == "n2"
    two = _plane(21, 4, 2)
    assert two[:8] == ["n1", "n1", "n2", "n2", "n3", "n3", "n4", "n4"] and two[16:] == ["n1", "n1", "n2", "n2", "n3"]
    assert _plane(8, 2, 2, SLURM_DISTRIBUTION="plane=2", SLURM_DIST_PLANESIZE="9") == ["n1", "n1", "n2", "n2"] * 2
    # SLURM_NODEID / SLURM_LOCALID are checked against the plane's order
    assert _plane(8, 2, 2, SLURM_PROCID="5", SLURM_NODEID="0", SLURM_LOCALID="3")[5] == "n1"


@pytest.mark.parametrize(
    "variables, message",
    [
        ({"SLURM_DIST_PLANESIZE": None}, "SLURM_DISTRIBUTION='plane' needs SLURM_DIST_PLANESIZE"),
        ({"SLURM_DIST_PLANESIZE": "0"}, "the plane size '0' (from SLURM_DIST_PLANESIZE) must be a whole number"),
        ({"SLURM_DIST_PLANESIZE": "x"}, "the plane size 'x'"),
        ({"SLURM_DISTRIBUTION": "plane=-1"}, "the plane size '-1' (from SLURM_DISTRIBUTION)"),
        ({"SLURM_PROCID": "2", "SLURM_NODEID": "0"}, "SLURM_NODEID='0', but task 2 of the step runs on node n2"),
    ],
)
def test_a_plane_distribution_without_a_valid_size_is_named(variables, message):
    env = {
        "SLURM_STEP_ID": "0",
        "SLURM_PROCID": "0",
        "SLURM_STEP_NUM_TASKS": "4",
        "SLURM_STEP_NODELIST": "n[1-2]",
        "SLURM_STEP_TASKS_PER_NODE": "2(x2)",
        "SLURM_DISTRIBUTION": "plane",
        "SLURM_DIST_PLANESIZE": "2",
    }
    env.update(variables)
    assert message in refused({k: v for k, v in env.items() if v is not None})


@pytest.mark.parametrize(
    "variables, message",
    [
        ({"SLURM_PROCID": "7"}, "SLURM_PROCID='7' must be less than SLURM_STEP_NUM_TASKS='7'"),
        ({"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "8"}, "adding up to 7, for SLURM_STEP_NUM_TASKS=8"),
        ({"SLURM_PROCID": "2", "SLURM_NODEID": "0"}, "SLURM_NODEID='0', but task 2 of the step runs on node gpu02"),
        ({"SLURM_PROCID": "2", "SLURM_LOCALID": "1"}, "as its local task 0"),
        ({"SLURM_PROCID": "x"}, "SLURM_PROCID has invalid value 'x'"),
    ],
)
def test_contradictory_slurm_variables_are_named(variables, message):
    assert message in refused(dict(SLURM_2_NODES, **variables))


def test_a_distribution_that_hides_the_nodes_is_refused_on_several_nodes():
    message = refused(dict(SLURM_2_NODES, SLURM_PROCID="0", SLURM_DISTRIBUTION="arbitrary"), NotAvailableError)
    assert "SLURM_DISTRIBUTION='arbitrary'" in message and "--distribution=block, cyclic or plane=<size>" in message


def test_torchrun_and_mpi_on_one_machine():
    assert view({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2", "DEVICE_ID": "1"})[:5] == (
        "torchrun",
        1,
        2,
        1,
        2,
    )
    assert view({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "3", "OMPI_COMM_WORLD_LOCAL_SIZE": "3"})[:3] == (
        "mpi",
        0,
        3,
    )
    assert view({"PMI_RANK": "2", "PMI_SIZE": "4", "MPI_LOCALNRANKS": "4", "DEVICE_ID": "2"})[:3] == ("mpi", 2, 4)


def test_launchers_that_do_not_say_where_other_machines_ranks_run_are_refused_with_the_way_out():
    message = refused({"RANK": "5", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4"}, NotAvailableError)
    assert message.startswith("torchrun (RANK='5', WORLD_SIZE='8'") and "rank table" in message
    assert "RANK='1' is set but WORLD_SIZE is not" in refused({"RANK": "1"})
    assert "OMPI_COMM_WORLD_LOCAL_SIZE='4' is more than the world's 2 ranks" in refused(
        {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}
    )


def test_mpi_under_srun_takes_the_hosts_from_slurm():
    two = {
        "SLURM_STEP_ID": "0",
        "SLURM_STEP_NUM_TASKS": "2",
        "SLURM_STEP_NODELIST": "a,b",
        "SLURM_STEP_TASKS_PER_NODE": "1(x2)",
    }
    assert view(dict(two, SLURM_PROCID="1", PMI_RANK="1", PMI_SIZE="2")) == ("mpi", 1, 2, 0, 1, ["a", "b"])


def test_two_sources_of_one_world_must_give_the_same_rank():
    one = {
        "SLURM_STEP_ID": "0",
        "SLURM_STEP_NUM_TASKS": "2",
        "SLURM_STEP_NODELIST": "n",
        "SLURM_STEP_TASKS_PER_NODE": "2",
    }
    message = refused(dict(one, SLURM_PROCID="1", OMPI_COMM_WORLD_RANK="0", OMPI_COMM_WORLD_SIZE="2"))
    assert "slurm (SLURM_PROCID='1'" in message and "but mpi (OMPI_COMM_WORLD_RANK='0'" in message
    message = refused(dict(one, SLURM_PROCID="1", RANK_ID="0", RANK_SIZE="2"))
    assert "but the env world makes it rank 0" in message and "RANK_ID exported by hand" in message
    # agreeing, or an outer launcher of another size (one srun task per machine), is fine
    assert view(dict(one, SLURM_PROCID="1", RANK_ID="1", RANK_SIZE="2"))[:2] == ("env", 1)
    assert view(dict(one, SLURM_PROCID="1", RANK="5", WORLD_SIZE="8", LOCAL_WORLD_SIZE="8"))[:2] == ("torchrun", 5)
    # ranks npu-run started take their world from npu-run
    launched = dict(one, SLURM_PROCID="1", RANK_ID="0", RANK_SIZE="2", NPU_RUN_NETWORK="private")
    assert view(launched)[:2] == ("env", 0)


def test_tf_config_numbers_the_chief_then_the_workers():
    cluster = {"chief": ["c0:2222"], "worker": ["w0:2222", "w1:2222"], "evaluator": ["e0:2222"]}
    config = {"cluster": cluster, "task": {"type": "worker", "index": 1}}
    assert view({"TF_CONFIG": json.dumps(config)}) == ("tf_config", 2, 3, 0, 1, ["c0", "w0", "w1"])
    evaluator = dict(config, task={"type": "evaluator", "index": 0})
    message = refused({"TF_CONFIG": json.dumps(evaluator)}, NotAvailableError)
    assert "a rank's task must be chief, master or worker" in message
    # no cluster, or parameter servers (TensorFlow's own parameter-server training): not a collective world
    for alone in ('{"task": {"type": "worker", "index": 0}}', '{"cluster": {}}'):
        assert view({"TF_CONFIG": alone})[0] == "single"
    with_ps = dict(config, cluster=dict(cluster, ps=["p0:2222"]))
    assert view({"TF_CONFIG": json.dumps(with_ps)})[0] == "single"
    for bad, message in (
        ("{", "TF_CONFIG has invalid value '{': must be JSON"),
        ("[]", "must be a JSON object"),
        ('{"cluster": [1]}', "must be {"),
        ('{"cluster": {"worker": "w0:1"}, "task": {}}', 'cluster "worker" must be a list'),
        ('{"cluster": {"worker": ["w0"]}, "task": {}}', 'must be a list of "host:port" strings'),
        ('{"cluster": {"worker": ["w0:1"]}, "task": {"type": "worker", "index": 3}}', "task worker 3 is not in"),
        ('{"cluster": {"worker": ["w0:1"]}, "task": {"type": "worker", "index": true}}', "must be an integer"),
    ):
        assert message in refused({"TF_CONFIG": bad}), bad


def test_volcano_numbers_the_master_task_first():
    env = {"VC_TASK_INDEX": "1", "VC_WORKER_HOSTS": "j-worker-0.j,j-worker-1.j", "VC_MASTER_HOSTS": "j-master-0.j"}
    assert view(dict(env, HOSTNAME="j-worker-1")) == (
        "volcano",
        2,
        3,
        0,
        1,
        ["j-master-0.j", "j-worker-0.j", "j-worker-1.j"],
    )
    assert view(dict(env, VC_TASK_INDEX="0", HOSTNAME="j-master-0"))[1] == 0
    assert "cannot tell this pod's task" in refused(dict(env, HOSTNAME="elsewhere"))
    assert "lists 2 pods" in refused(dict(env, VC_TASK_INDEX="2", HOSTNAME="j-worker-1"))
    assert "no VC_<TASK>_HOSTS" in refused({"VC_TASK_INDEX": "0"})


def test_hostile_values_are_shortened_and_escaped_in_the_message():
    message = refused({"RANK": "\x1b[2J" + "9" * 5000, "WORLD_SIZE": "2"})
    assert "\x1b" not in message and len(message) < 400


def _write(path, status):
    table = {
        "status": status,
        "version": "1.0",
        "server_count": "1",
        "server_list": [{"server_id": "10.0.0.1", "device": [{"device_id": "0", "rank_id": "0"}]}],
    }
    if status == "initializing":
        table = {"status": status}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(table))
    tmp.rename(path)


def test_a_rank_table_being_filled_in_is_waited_for(tmp_path):
    path = tmp_path / "hccl.json"
    _write(path, "initializing")
    timer = threading.Timer(1.0, _write, (path, "completed"))
    timer.start()
    try:
        started = time.monotonic()
        w = world.load_world({"RANK_TABLE_FILE": str(path), "HCCL_CONNECT_TIMEOUT": "30"})
    finally:
        timer.cancel()
    assert w.source == "rank_table" and w.rank_size == 1
    assert 0.9 < time.monotonic() - started < 30


def test_a_rank_table_never_completed_fails_after_the_connect_timeout(tmp_path):
    path = tmp_path / "hccl.json"
    _write(path, "initializing")
    now = [0.0]
    with pytest.raises(RankTableError, match=r'still "initializing" after 5 s \(HCCL_CONNECT_TIMEOUT\)'):
        rank_table.load_completed(str(path), 5, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert now[0] == 5.0
    path.write_text('{"status": "broken"}')
    with pytest.raises(RankTableError, match='status is "broken"'):
        rank_table.load_completed(str(path), 5, clock=lambda: 0.0, sleep=pytest.fail)
