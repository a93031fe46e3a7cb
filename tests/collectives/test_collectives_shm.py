"""The shared-memory collective path: the segment npu-run makes, the choice of path, bad inputs (ranks that
disagree, a bad NPU_BRIDGE_COLLECTIVES, a segment that is not there) and more ranks than cores. Values on both
paths are checked by test_collectives_ops.py, dead and hung ranks by test_collectives_faults.py."""

import os
import types

import pytest
from helpers.collectives import launch
from helpers.processes import run_python
from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.collectives import shm_primitives, shm_segment, thread_spinning
from npu_bridge.core.runtime.errors import EnvironmentVariableError


def test_the_segment_is_an_anonymous_memfd_that_cannot_shrink():
    fd = shm_segment.create()
    try:
        assert os.readlink(f"/proc/self/fd/{fd}").startswith(f"/memfd:{shm_segment.MEMFD_NAME}")
        assert not os.get_inheritable(fd)  # reaches the ranks only through pass_fds
        os.ftruncate(fd, 4096)
        with pytest.raises(PermissionError):
            os.ftruncate(fd, 0)
        assert shm_segment.descriptor({shm_segment.FD_VARIABLE: str(fd)}) == fd
    finally:
        os.close(fd)
    assert not [name for name in os.listdir("/dev/shm") if shm_segment.MEMFD_NAME in name]


def test_the_shapes_of_the_segment_s_ops_are_known_and_uneven_slices_refused_at_graph_build():
    import tensorflow as tf

    place = types.SimpleNamespace(group_key=1, slots=(0, 1, 2), world_ranks=(0, 1, 2), group_rank=0, local_size=3)
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [6, 2])
        assert shm_primitives.all_gather(x, place, 1, 5).shape.as_list() == [18, 2]
        assert shm_primitives.reduce_scatter(x, place, "Add", 2, 5).shape.as_list() == [2, 2]
        assert shm_primitives.all_to_all(x, place, 3, 5).shape.as_list() == [6, 2]
        uneven = tf.compat.v1.placeholder(tf.float32, [4, 2])
        for build in (
            lambda: shm_primitives.all_to_all(uneven, place, 4, 5),
            lambda: shm_primitives.reduce_scatter(uneven, place, "Add", 5, 5),
        ):
            with pytest.raises(ValueError, match="evenly divisible by 3"):
                build()


@pytest.mark.parametrize("value", ["", "x", "-1", "99999", "0", "1" * 40])
def test_a_descriptor_that_is_not_the_segment_is_ignored(value):
    assert shm_segment.descriptor({shm_segment.FD_VARIABLE: value}) is None


def test_the_path_variable_accepts_three_values_and_names_them_otherwise():
    assert shm_segment.path_choice({}) == "auto"
    for value in shm_segment.PATHS:
        assert shm_segment.path_choice({shm_segment.PATH_VARIABLE: f" {value} "}) == value
    with pytest.raises(EnvironmentVariableError, match="COLLECTIVES has invalid value 'grpc'.*auto, shm, tf"):
        shm_segment.path_choice({shm_segment.PATH_VARIABLE: "grpc"})


def test_thread_spinning_is_off_where_ranks_share_the_host_unless_the_variable_says_otherwise():
    alone, shared = (types.SimpleNamespace(local_rank_ids=ids) for ids in ((3,), (2, 3)))
    variable = thread_spinning.SPINNING_VARIABLE
    for environ, off_alone, off_shared in (
        ({}, False, True),
        ({variable: " auto "}, False, True),
        ({variable: "0"}, True, True),
        ({variable: "1"}, False, False),
    ):
        assert (thread_spinning.spinning_off(alone, environ), thread_spinning.spinning_off(shared, environ)) == (
            off_alone,
            off_shared,
        ), environ
    config = config_pb2.ConfigProto()
    config.experimental.disable_thread_spinning = True
    thread_spinning.apply(config, alone, {variable: "1"})
    assert config.experimental.disable_thread_spinning  # a script's own choice is never turned back
    for value in ("on", "2", "true", "\x1b[2J"):
        with pytest.raises(EnvironmentVariableError, match=r"SPINNING has invalid value .*one of auto, 0, 1 \(auto"):
            thread_spinning.choice({variable: value})


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("variable", ["NPU_BRIDGE_COLLECTIVES", "NPU_BRIDGE_THREAD_SPINNING"])
def test_a_bad_path_or_spinning_value_fails_at_session_creation(variable):
    result = run_python(
        "from npu_bridge.npu_init import *\ntf.Session(config=npu_config_proto())",
        env={variable: "fast"},
        timeout=50,
    )
    assert result.returncode == 1
    assert f"EnvironmentVariableError: {variable} has invalid value 'fast'" in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_shm_demanded_without_a_segment_is_a_clear_error():
    result = run_python(
        "from npu_bridge.npu_init import *\nhccl_ops.allreduce(tf.ones([2]), 'sum')",
        env={"NPU_BRIDGE_COLLECTIVES": "shm", "RANK_SIZE": "2", "RANK_ID": "0", "NPU_BRIDGE_SHM_FD": "0"},
        timeout=50,
    )
    assert result.returncode == 1
    assert "CollectiveError: NPU_BRIDGE_COLLECTIVES=shm, but this process has no shared-memory segment" in (
        result.stderr
    )


@pytest.mark.slow
@pytest.mark.timeout(150)
@pytest.mark.parametrize("size", [2, 3])
def test_ranks_that_pass_different_shapes_fail_with_a_clear_error_on_every_rank(size):
    result, results = launch("shm_mismatch_worker.py", size, env={"HCCL_EXEC_TIMEOUT": "30"}, timeout=130)
    assert sorted(results) == list(range(size)), result.stdout[-3000:] + result.stderr[-3000:]
    for rank in range(size):
        got = results[rank]
        assert got["type"] == "HcomShmAllReduce"
        assert f"rank {rank}: HcomAllReduce (allreduce, group 'hccl_world_group'" in got["error"], got["error"]
        assert "the ranks passed different shapes" in got["error"], got["error"]
        assert "Collectives cannot run again in this process" in got["second_error"], got["second_error"]
        assert got["second_error_seconds"] < 1


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_eight_ranks_on_two_cores_finish_their_steps():
    size = 8
    result, results = launch("shm_steps_worker.py", size, args=["20"], timeout=280)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert sorted(results) == list(range(size))
    for rank in range(size):
        got = results[rank]
        assert got["types"] == ["HcomShmAllGather", "HcomShmAllReduce", "HcomShmBroadcastRecv"] or rank == size - 1
        assert got["small"] == [size * (size + 1) / 2] * 4
        assert got["large"] == 512 * 1024 * size
        assert got["gathered"] == list(range(size))
        assert got["broadcast"] == [size - 1] * 3


@pytest.mark.slow
@pytest.mark.timeout(200)
@pytest.mark.parametrize("path", ["shm", "tf"])
@pytest.mark.parametrize("size", [2, 3])
def test_a_send_receive_pipeline_runs_both_directions_in_one_step(size, path):
    result, results = launch(
        "pipeline_worker.py",
        size,
        args=["3"],
        env={"NPU_BRIDGE_COLLECTIVES": path, "HCCL_EXEC_TIMEOUT": "60"},
        timeout=180,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    expected = 2 ** (size - 2) + size - 1  # doubled by every rank after the first, then 1 added per rank back
    assert results[0]["back"] == [expected, expected]
    for rank in range(size):
        shm = {"HcomShmBroadcastSend", "HcomShmBroadcastRecv"}
        assert (set(results[rank]["types"]) <= shm) == (path == "shm"), results[rank]["types"]


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_sessions_of_a_one_host_job_run_locally_without_thread_spinning_and_say_so_when_tf_needs_the_server():
    result, results = launch("session_target_worker.py", 2, timeout=150)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for rank in range(2):
        got = results[rank]
        assert got["target"] == ""  # every collective on the segment: no gRPC master in between
        assert got["spinning_off"] is True and got["user_config_spinning_off"] is False  # 2 ranks on this host
        assert got["tf_spinning_off"] is False  # NPU_BRIDGE_THREAD_SPINNING=1
        assert got["sum"] == got["sum_again"] == [3.0]
        assert f"rank {rank}: HcomAllReduce_1: TensorFlow collective ops in a session that runs without" in got["error"]
        assert "set NPU_BRIDGE_COLLECTIVES=tf before creating the session" in got["error"]
        assert got["tf_target"].startswith("grpc://") and got["tf_sum"] == [3.0]
