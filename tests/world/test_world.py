"""The collective world: rank table, CM_*, RANK_SIZE/RANK_ID and single-rank worlds, and their errors."""

import json
import os
import pathlib

import pytest
from helpers.paths import TESTS_DIR

from npu_bridge.core.runtime import system
from npu_bridge.core.runtime.errors import DeviceIdError, NotAvailableError, NotInitializedError, RankTableError
from npu_bridge.core.world import groups, world

DATA = os.path.join(TESTS_DIR, "data", "rank_tables")
TWO_SERVERS = os.path.join(DATA, "template1_2servers.json")
SINGLE_SERVER = os.path.join(DATA, "template1_single_server.json")
PODS = os.path.join(DATA, "template2_pods.json")
CM = {"CM_CHIEF_IP": "127.0.0.1", "CM_CHIEF_PORT": "6000", "CM_CHIEF_DEVICE": "0", "CM_WORKER_SIZE": "4"}


def world_error(environ, error=RankTableError, session_device_id=None):
    with pytest.raises(error) as info:
        world.load_world(environ, session_device_id)
    return str(info.value)


def summary(w):
    return (w.source, w.rank_size, w.rank_id, w.device_id, w.local_rank_size, w.local_rank_id, w.server_id)


def test_no_variables_is_a_world_of_one():
    w = world.load_world({})
    assert summary(w) == ("single", 1, 0, 0, 1, 0, "127.0.0.1")
    assert [(r.rank_id, r.host, r.device_id) for r in w.ranks] == [(0, "127.0.0.1", 0)]
    assert (w.rank_table_path, w.job_id, w.pod_name, w.chief_address) == (None, None, None, None)


def test_single_world_keeps_device_and_job():
    w = world.load_world({"ASCEND_DEVICE_ID": "3", "JOB_ID": "job-7", "POD_NAME": "p"})
    assert (w.device_id, w.job_id, w.pod_name) == (3, "job-7", "p")


def test_empty_variables_count_as_unset():
    assert world.load_world({"RANK_TABLE_FILE": "", "RANK_SIZE": "", "CM_CHIEF_IP": ""}).source == "single"


# RANK_SIZE / RANK_ID


def test_env_world():
    w = world.load_world({"RANK_SIZE": "4", "RANK_ID": "2", "DEVICE_ID": "6"})
    assert summary(w) == ("env", 4, 2, 6, 4, 2, "127.0.0.1")
    assert [r.host for r in w.ranks] == ["127.0.0.1"] * 4
    assert w.local_rank_ids == (0, 1, 2, 3)


def test_env_world_without_device_uses_local_rank():
    assert world.load_world({"RANK_SIZE": "2", "RANK_ID": "1"}).device_id == 1


def test_rank_size_one_needs_no_rank_id():
    assert summary(world.load_world({"RANK_SIZE": "1"})) == ("env", 1, 0, 0, 1, 0, "127.0.0.1")


def test_a_rank_id_next_to_rank_size_one_labels_the_device_of_a_one_rank_job(tmp_path, caplog):
    # the zoo's 1p wrappers export RANK_SIZE=1 RANK_ID=1; Ascend runs that one device without HCCL
    assert summary(world.load_world({"RANK_SIZE": "1", "RANK_ID": "1"}))[:4] == ("env", 1, 0, 0)
    assert world.rank_id_from_environment({"RANK_SIZE": "1", "RANK_ID": "1"}) == 0
    table = tmp_path / "one.json"
    table.write_text(
        '{"server_count": "1", "server_list": [{"server_id": "127.0.0.1", "device": '
        '[{"device_id": "0", "device_ip": "127.0.0.1", "rank_id": "0"}]}], "status": "completed", "version": "1.0"}'
    )
    under_npu_run = world.load_world({"RANK_TABLE_FILE": str(table), "RANK_SIZE": "1", "RANK_ID": "1"})
    assert (under_npu_run.rank_id, under_npu_run.rank_size) == (0, 1)
    assert "RANK_SIZE=1 with RANK_ID='1': a one-rank job; it runs as rank 0 of 1" in caplog.text
    assert "must be an integer" in world_error({"RANK_SIZE": "1", "RANK_ID": "x"})


def test_rank_size_one_next_to_a_larger_rank_table_is_a_one_rank_job_that_says_so(caplog):
    # a 1p wrapper that exports the 8p table (SSD-Resnet34_TF_Atlas in the zoo)
    environ = {"RANK_TABLE_FILE": TWO_SERVERS, "RANK_SIZE": "1", "RANK_ID": "0", "ASCEND_DEVICE_ID": "3"}
    assert summary(world.load_world(environ)) == ("env", 1, 0, 3, 1, 0, "127.0.0.1")
    assert (
        f"RANK_SIZE=1 with the rank table {TWO_SERVERS} of 4 ranks: a one-rank job; it runs as rank 0 of 1 without "
        "the table" in caplog.text
    )
    assert world.load_world(dict(environ, RANK_ID="5")).rank_id == 0  # a label of the device, as without a table
    broken = os.path.join(DATA, "no_such_table.json")
    assert "no_such_table.json" in world_error({"RANK_TABLE_FILE": broken, "RANK_SIZE": "1"})  # still read


@pytest.mark.parametrize(
    "environ, message",
    [
        ({"RANK_SIZE": "4"}, "RANK_SIZE='4' but RANK_ID is not set; set RANK_ID to this process's rank, 0..3"),
        ({"RANK_SIZE": "4", "RANK_ID": "4"}, "RANK_ID='4' must be less than RANK_SIZE='4'"),
        ({"RANK_ID": "1"}, "RANK_ID='1' must be less than RANK_SIZE (unset, so 1)"),
        ({"RANK_SIZE": "four", "RANK_ID": "0"}, "RANK_SIZE has invalid value 'four': must be an integer in [1, 32768]"),
        ({"RANK_SIZE": "0"}, "RANK_SIZE has invalid value '0': must be an integer in [1, 32768]"),
        ({"RANK_SIZE": "2", "RANK_ID": "-1"}, "RANK_ID has invalid value '-1': must be an integer in [0, 32767]"),
        ({"RANK_SIZE": "٣", "RANK_ID": "0"}, "RANK_SIZE has invalid value '٣': must be an integer in [1, 32768]"),
    ],
)
def test_env_world_errors(environ, message):
    assert world_error(environ) == message


def test_a_huge_variable_is_quoted_shortened():
    message = world_error({"RANK_SIZE": "x" * 100000, "RANK_ID": "0"})
    assert message.startswith("RANK_SIZE has invalid value 'xxx") and "... (100002 characters)" in message
    assert len(message) < 400


def test_rank_id_where_scripts_read_it_directly():
    assert world.rank_id_from_environment({}) == 0
    assert world.rank_id_from_environment({"RANK_ID": ""}) == 0
    assert world.rank_id_from_environment({"RANK_ID": "3", "RANK_SIZE": "4"}) == 3
    for environ, message in (
        ({"RANK_ID": "abc"}, "RANK_ID has invalid value 'abc': must be an integer in [0, 32767]"),
        ({"RANK_ID": "١"}, "RANK_ID has invalid value '١'"),
        ({"RANK_ID": "4", "RANK_SIZE": "4"}, "RANK_ID='4' must be less than RANK_SIZE='4'"),
    ):
        with pytest.raises(RankTableError) as raised:
            world.rank_id_from_environment(environ)
        assert message in str(raised.value)


# Rank tables


def test_rank_table_world_by_rank_id():
    w = world.load_world({"RANK_TABLE_FILE": TWO_SERVERS, "RANK_ID": "3", "RANK_SIZE": "4", "JOB_ID": "10086"})
    assert summary(w) == ("rank_table", 4, 3, 1, 2, 1, "localhost")
    assert w.local_rank_ids == (2, 3)
    assert [r.host for r in w.ranks] == ["127.0.0.1", "127.0.0.1", "localhost", "localhost"]
    assert (w.rank_table_path, w.job_id) == (TWO_SERVERS, "10086")


def test_explicit_device_id_wins_over_the_tables():
    w = world.load_world({"RANK_TABLE_FILE": SINGLE_SERVER, "RANK_ID": "1", "ASCEND_DEVICE_ID": "5"})
    assert (w.rank_id, w.device_id, w.ranks[1].device_id) == (1, 5, 1)


def test_rank_table_world_by_unique_device_id():
    w = world.load_world({"RANK_TABLE_FILE": SINGLE_SERVER, "ASCEND_DEVICE_ID": "2"})
    assert (w.rank_id, w.device_id, w.local_rank_id) == (2, 2, 2)


def test_rank_table_world_by_session_device_id():
    assert world.load_world({"RANK_TABLE_FILE": SINGLE_SERVER}, session_device_id=3).rank_id == 3


def test_template2_world_by_pod_name():
    w = world.load_world({"RANK_TABLE_FILE": PODS, "POD_NAME": "pod-c"})
    assert summary(w) == ("rank_table", 4, 2, 2, 4, 2, "10.0.0.10")
    assert w.pod_name == "pod-c"


def test_template2_pod_name_comes_from_the_table_with_rank_id():
    assert world.load_world({"RANK_TABLE_FILE": PODS, "RANK_ID": "1"}).pod_name == "pod-b"


def test_one_rank_table_needs_no_rank_id(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(
        json.dumps(
            {
                "status": "completed",
                "version": "1.0",
                "server_count": "1",
                "server_list": [{"server_id": "10.0.0.10", "device": [{"device_id": "4", "rank_id": "0"}]}],
            }
        )
    )
    w = world.load_world({"RANK_TABLE_FILE": str(path)})
    assert summary(w) == ("rank_table", 1, 0, 4, 1, 0, "10.0.0.10")


def test_pod_with_several_devices_is_narrowed_by_device(tmp_path):
    path = tmp_path / "pod.json"
    path.write_text(
        json.dumps(
            {
                "status": "completed",
                "group_list": [
                    {
                        "instance_list": [
                            {
                                "pod_name": "pod-0",
                                "server_id": "10.0.0.10",
                                "devices": [{"device_id": "0"}, {"device_id": "1"}],
                            }
                        ]
                    }
                ],
            }
        )
    )
    assert world.load_world({"RANK_TABLE_FILE": str(path), "POD_NAME": "pod-0", "DEVICE_ID": "1"}).rank_id == 1
    assert world_error({"RANK_TABLE_FILE": str(path), "POD_NAME": "pod-0"}) == (
        f"POD_NAME='pod-0' has ranks [0, 1] (devices [0, 1]) in the rank table {path}; set RANK_ID, or "
        "ASCEND_DEVICE_ID to one of those devices, to pick one"
    )


def test_rank_table_errors_reach_the_world(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"status": "done"}')
    assert world_error({"RANK_TABLE_FILE": str(path), "RANK_ID": "0"}).startswith(
        f'rank table {path}: status is "done", must be "completed"'
    )


@pytest.mark.parametrize(
    "environ, message",
    [
        (
            {"RANK_TABLE_FILE": TWO_SERVERS, "RANK_ID": "0", "RANK_SIZE": "8"},
            f"RANK_SIZE='8' disagrees with the rank table {TWO_SERVERS}, which has 4 ranks; set RANK_SIZE=4 or "
            f"unset it",
        ),
        (
            {"RANK_TABLE_FILE": TWO_SERVERS, "RANK_ID": "4"},
            f"RANK_ID='4' is not a rank of the rank table {TWO_SERVERS}, which has ranks 0..3",
        ),
        (
            {"RANK_TABLE_FILE": TWO_SERVERS},
            f"the rank table {TWO_SERVERS} has 4 ranks and nothing says which one this process is: set RANK_ID to this "
            "process's rank_id in the table; no device id is set either (ASCEND_DEVICE_ID would select the rank using "
            "that device)",
        ),
        (
            {"RANK_TABLE_FILE": TWO_SERVERS, "ASCEND_DEVICE_ID": "1"},
            f"the rank table {TWO_SERVERS} has 4 ranks and nothing says which one this process is: set RANK_ID to this "
            "process's rank_id in the table; the device id 1 (from ASCEND_DEVICE_ID) matches ranks [1, 3]",
        ),
        (
            {"RANK_TABLE_FILE": PODS, "DEVICE_ID": "7"},
            f"the rank table {PODS} has 4 ranks and nothing says which one this process is: set RANK_ID to this "
            "process's rank_id in the table, or POD_NAME to its pod_name; the device id 7 (from DEVICE_ID) matches no "
            "rank",
        ),
        (
            {"RANK_TABLE_FILE": PODS, "POD_NAME": "pod-z"},
            f"POD_NAME='pod-z' names no pod of the rank table {PODS} (pods: ['pod-a', 'pod-b', 'pod-c', 'pod-d'])",
        ),
        (
            {"RANK_TABLE_FILE": PODS, "POD_NAME": "pod-a", "RANK_ID": "2"},
            f"RANK_ID='2' and POD_NAME='pod-a' disagree: in the rank table {PODS} rank 2 belongs to pod 'pod-c'",
        ),
    ],
)
def test_rank_table_world_errors(environ, message):
    assert world_error(environ) == message


# CM mode


def test_cm_chief():
    w = world.load_world(dict(CM, ASCEND_DEVICE_ID="0"))
    assert summary(w) == ("cm", 4, 0, 0, 4, 0, "127.0.0.1")
    assert w.chief_address == "127.0.0.1:6000"
    assert [r.host for r in w.ranks] == ["127.0.0.1"] * 4


def test_cm_chief_device_defaults_to_cm_chief_device():
    w = world.load_world(dict(CM, CM_CHIEF_DEVICE="3", RANK_ID="0"))
    assert (w.rank_id, w.device_id) == (0, 3)


def test_cm_worker_with_rank_id():
    w = world.load_world(dict(CM, RANK_ID="2", ASCEND_DEVICE_ID="5", CM_WORKER_IP="127.0.0.1"))
    assert summary(w) == ("cm", 4, 2, 5, 4, 2, "127.0.0.1")
    assert [r.device_id for r in w.ranks] == [0, None, 5, None]


def test_cm_ipv6_chief_address():
    assert world.load_world(dict(CM, CM_CHIEF_IP="::1", DEVICE_ID="0")).chief_address == "[::1]:6000"


@pytest.mark.parametrize(
    "environ, message",
    [
        (
            dict(CM, RANK_SIZE="4"),
            "RANK_SIZE and CM_WORK_SIZE cannot be configured at the same time (RANK_SIZE='4', CM_WORKER_SIZE='4'); "
            "in CM mode the number of ranks is CM_WORKER_SIZE, so unset RANK_SIZE",
        ),
        (
            dict(CM, RANK_TABLE_FILE=TWO_SERVERS),
            f"RANK_TABLE_FILE={TWO_SERVERS!r} and CM_CHIEF_IP='127.0.0.1', CM_CHIEF_PORT='6000', CM_CHIEF_DEVICE='0', "
            "CM_WORKER_SIZE='4' both describe the world; set only one of them (CM_* is upstream's rank-table-free "
            "setup)",
        ),
        (
            {"CM_CHIEF_IP": "127.0.0.1", "CM_WORKER_SIZE": "2"},
            "CM mode (CM_CHIEF_IP='127.0.0.1', CM_WORKER_SIZE='2') also needs CM_CHIEF_PORT, CM_CHIEF_DEVICE; CM mode "
            "requires CM_CHIEF_IP, CM_CHIEF_PORT, CM_CHIEF_DEVICE, CM_WORKER_SIZE (CM_WORKER_IP is optional)",
        ),
        (
            dict(CM, CM_CHIEF_PORT="65521", RANK_ID="0"),
            "CM_CHIEF_PORT has invalid value '65521': must be an integer in [0, 65520]",
        ),
        (
            dict(CM, CM_WORKER_SIZE="32769", RANK_ID="0"),
            "CM_WORKER_SIZE has invalid value '32769': must be an integer in [1, 32768]",
        ),
        (
            dict(CM, CM_WORKER_SIZE="0", RANK_ID="0"),
            "CM_WORKER_SIZE has invalid value '0': must be an integer in [1, 32768]",
        ),
        (
            dict(CM, CM_CHIEF_IP="chief-host", RANK_ID="0"),
            "CM_CHIEF_IP has invalid value 'chief-host': must be an IPv4 or IPv6 address such as \"10.0.0.1\"",
        ),
        (
            dict(CM, ASCEND_DEVICE_ID="1"),
            "CM mode: cannot tell this worker's rank; set RANK_ID (0..3; 0 is the chief, the process on "
            "CM_CHIEF_DEVICE=0)",
        ),
        (
            dict(CM, RANK_ID="1", ASCEND_DEVICE_ID="0"),
            "RANK_ID='1' contradicts the device id 0 (from ASCEND_DEVICE_ID): the chief runs on CM_CHIEF_DEVICE=0 and "
            "is rank 0, every other worker on another device",
        ),
        (
            dict(CM, RANK_ID="2"),
            "CM mode: worker rank 2 has no device id; set ASCEND_DEVICE_ID (or DEVICE_ID), since CM workers are told "
            "apart by their device",
        ),
        (dict(CM, RANK_ID="4", DEVICE_ID="4"), "RANK_ID='4' must be less than CM_WORKER_SIZE='4'"),
    ],
)
def test_cm_errors(environ, message):
    assert world_error(environ) == message


def test_cm_on_several_machines_started_by_hand_points_to_npu_run():
    message = world_error(dict(CM, CM_WORKER_IP="10.0.0.2", RANK_ID="1", DEVICE_ID="1"), NotAvailableError)
    assert message.startswith(
        "CM mode with workers on several machines (CM_WORKER_IP='10.0.0.2', CM_CHIEF_IP='127.0.0.1') needs the "
        "chief's rendezvous, which npu-run serves: start one npu-run per machine"
    )


def test_device_id_errors_surface():
    assert world_error({"ASCEND_DEVICE_ID": "x"}, DeviceIdError).startswith("ASCEND_DEVICE_ID is invalid")


def test_environment_world_needs_no_initialization():
    assert not system.is_initialized()
    w = world.environment_world(session_device_id=1, environ={"RANK_SIZE": "2", "RANK_ID": "0"})
    assert (w.rank_size, w.device_id) == (2, 1)
    with pytest.raises(RankTableError):
        world.environment_world(environ={"RANK_TABLE_FILE": "/nonexistent/hccl.json", "RANK_ID": "0"})


def test_environment_world_is_read_once_for_each_environment(tmp_path, monkeypatch):
    loads = []
    real_load = world.load_world
    monkeypatch.setattr(world, "load_world", lambda *args: loads.append(args) or real_load(*args))
    table = tmp_path / "hccl.json"
    table.write_text(pathlib.Path(SINGLE_SERVER).read_text())
    environ = {"RANK_TABLE_FILE": str(table), "RANK_ID": "1"}
    first = world.environment_world(environ=environ)
    assert all(world.environment_world(environ=dict(environ)) is first for _ in range(50))
    assert len(loads) == 1  # fifty more questions, one read of the environment and the rank table
    assert world.environment_world(session_device_id=3, environ=environ).device_id == 3  # another option: read
    assert world.environment_world(environ=dict(environ, RANK_ID="0")).rank_id == 0  # another variable: read
    table.write_text(table.read_text().replace('"rank_id": "1"', '"rank_id": "9"'))  # the table changed: read
    with pytest.raises(RankTableError):
        world.environment_world(environ=environ)
    assert len(loads) == 4


def test_a_collective_before_initialization_reads_the_world_once(monkeypatch):
    from npu_bridge.core.collectives import membership  # imports TensorFlow

    loads = []
    real_load = world.load_world
    monkeypatch.setattr(world, "load_world", lambda *args: loads.append(args) or real_load(*args))
    monkeypatch.setenv("RANK_SIZE", "1")
    assert not system.is_initialized()
    members = [membership.resolve(groups.WORLD_GROUP, "allreduce") for _ in range(20)]
    assert {(m.ranks, m.rank) for m in members} == {((0,), 0)}
    assert len(loads) <= 1


# current_world: once per initialization of the NPU system


def test_current_world_requires_initialization():
    with pytest.raises(NotInitializedError) as info:
        world.current_world()
    assert str(info.value).startswith(
        "current_world: the NPU system is not initialized; run `sess.run(npu_ops.initialize_system())`"
    )


def test_current_world_is_read_once_per_initialization(monkeypatch):
    monkeypatch.setenv("RANK_SIZE", "4")
    monkeypatch.setenv("RANK_ID", "1")
    system.initialize({"session_device_id": 3}, "resource_init", is_global=True)
    first = world.current_world()
    assert (first.rank_size, first.rank_id, first.device_id) == (4, 1, 3)
    monkeypatch.setenv("RANK_ID", "2")
    assert world.current_world() is first
    system.shutdown(force=True)
    with pytest.raises(NotInitializedError):
        world.current_world()
    system.initialize({}, "resource_init", is_global=True)
    second = world.current_world()
    assert (second.rank_id, second.device_id) == (2, 2)
