"""hccl_ops as a script builds them: argument errors (raised at once, naming the argument), where the ops go (the
host CPU, or the GPU through NCCL on the gpu backend), and what the operations compute in a world of one rank (no
communication)."""

import os

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config

from npu_bridge.core.collectives import shm_segment
from npu_bridge.core.device import device_target
from npu_bridge.core.runtime import system
from npu_bridge.core.runtime.errors import NotInitializedError, NotSupportedOffNpuError
from npu_bridge.estimator.npu import npu_plugin
from npu_bridge.hccl import hccl_ops


@pytest.fixture
def two_ranks(monkeypatch):
    """This process is rank 0 of 2 (graphs are only built, never run, so no peer is needed)."""
    monkeypatch.setenv("RANK_SIZE", "2")
    monkeypatch.setenv("RANK_ID", "0")
    monkeypatch.setenv("DEVICE_ID", "0")


X = [1.0, 2.0]
ERRORS = [
    (
        lambda: hccl_ops.allreduce(tf.constant(X, tf.float64), "sum"),
        TypeError,
        "allreduce: tensor has dtype float64, which HCCL does not support here; allowed: int8, int16, int32, int64, "
        "float16, float32, bfloat16",
    ),
    (
        lambda: hccl_ops.allreduce(X, "mean"),
        ValueError,
        "allreduce: reduction 'mean' is not supported; allowed: 'sum', 'prod', 'max', 'min'",
    ),
    (
        lambda: hccl_ops.allreduce(X, "sum", fusion=3),
        ValueError,
        "allreduce: fusion=3 is not supported; allowed: 0, 1, 2",
    ),
    (lambda: hccl_ops.allreduce(X, "sum", fusion_id=-2), ValueError, "allreduce: fusion_id=-2 is out of range"),
    (lambda: hccl_ops.allreduce(X, "sum", group=""), ValueError, "group name is empty."),
    (lambda: hccl_ops.allgather([X], 0), ValueError, "rank_size should be greater than 0."),
    (lambda: hccl_ops.allgather([X], 4), ValueError, "allgather: rank_size=4 but group 'hccl_world_group' has 2 ranks"),
    (lambda: hccl_ops.allgather(1.0, 2), ValueError, "allgather: tensor must have at least one dimension"),
    (lambda: hccl_ops.allgather([X], 2, fusion=1), ValueError, "allgather: fusion=1 is not supported; allowed: 0, 2"),
    (lambda: hccl_ops.broadcast(tf.constant(X), 0), TypeError, "broadcast: tensor must be a list of tensors"),
    (
        lambda: hccl_ops.broadcast([X], 2),
        ValueError,
        "broadcast: root_rank=2 is not a rank of group 'hccl_world_group', which has ranks 0..1",
    ),
    (
        lambda: hccl_ops.broadcast([tf.compat.v1.placeholder(tf.float32, [None])], 0),
        ValueError,
        "broadcast: tensor[0] (Placeholder:0) has shape (None,); broadcast needs fully defined shapes",
    ),
    (lambda: hccl_ops.broadcast([tf.constant(["a"])], 0), TypeError, "broadcast: tensor[0] has dtype string"),
    (lambda: hccl_ops.reduce(X, "sum", root_rank=-1), ValueError, "reduce: root_rank=-1 is not a rank of group"),
    (
        lambda: hccl_ops.reduce_scatter(tf.zeros([3]), "sum", 2),
        ValueError,
        "input first dim should be N * rank_size. reduce_scatter got shape (3,) with rank_size=2",
    ),
    (lambda: hccl_ops.reduce_scatter(tf.zeros([4]), "sum", 3), ValueError, "reduce_scatter: rank_size=3 but group"),
    (lambda: hccl_ops.send(X, sr_tag=-1, dest_rank=1), ValueError, "send: sr_tag=-1 is out of range; it must be >= 0"),
    (lambda: hccl_ops.send(X, sr_tag=0, dest_rank=0), ValueError, "send: dest_rank=0 is this process's own group rank"),
    (lambda: hccl_ops.receive([None], tf.float32, 0, 1), ValueError, "receive: shape (None,) must be fully defined"),
    (lambda: hccl_ops.receive([2], tf.string, 0, 1), TypeError, "receive: data_type string is not supported here"),
    (
        lambda: hccl_ops.all_to_all_v(X, [1], [0], [1, 1], [0, 1]),
        ValueError,
        "all_to_all_v: send_counts has shape (1,); it must be [2] (one entry per rank)",
    ),
    (
        lambda: hccl_ops.all_to_all_v(X, [1.0, 1.0], [0, 1], [1, 1], [0, 1]),
        TypeError,
        "all_to_all_v: send_counts has dtype float32",
    ),
    (
        lambda: hccl_ops.all_to_all_v_c(X, [[1, 1], [1, 1]], 1),
        ValueError,
        "all_to_all_v_c: rank=1 but this process is group rank 0 of 'hccl_world_group'",
    ),
    (
        lambda: hccl_ops.all_to_all_v_c(X, [[1, 1]], 0),
        ValueError,
        "all_to_all_v_c: send_count_matrix has shape (1, 2); it must be [2, 2]",
    ),
]


@pytest.mark.parametrize("build, error, message", ERRORS, ids=[m[:45] for _, _, m in ERRORS])
def test_bad_arguments_raise_at_once(two_ranks, build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error) as info:
            build()
    assert message in str(info.value)


def test_user_groups_need_initialization_and_membership(two_ranks):
    with tf.Graph().as_default():
        with pytest.raises(NotInitializedError, match=r"allreduce \(group 'pair'\): the NPU system is not initialized"):
            hccl_ops.allreduce(X, "sum", group="pair")
        system.initialize({}, "resource_init", is_global=True)
        from hccl.manage.api import create_group

        create_group("other", 1, [1])
        with pytest.raises(
            ValueError,
            match=r"allreduce: this process \(world rank 0\) is not a member of group "
            r"'other' \(world ranks \[1\]\)",
        ):
            hccl_ops.allreduce(X, "sum", group="other")
        with pytest.raises(ValueError, match="allreduce error: group 'nope' does not exist"):
            hccl_ops.allreduce(X, "sum", group="nope")


def test_graphs_of_two_ranks_are_built_before_initialization(two_ranks, monkeypatch):
    monkeypatch.setenv(shm_segment.PATH_VARIABLE, "tf")  # TensorFlow's ops (ranks of one host take the segment)
    with tf.Graph().as_default() as graph:
        hccl_ops.allreduce(X, "sum")
        hccl_ops.allgather([X], 2)
        hccl_ops.broadcast([tf.constant(X)], 1)
        hccl_ops.reduce_scatter(tf.zeros([4]), "max", 2)
    types = sorted(op.type for op in graph.get_operations() if op.type.startswith("Collective"))
    assert types == ["CollectiveAllToAllV2", "CollectiveBcastRecv", "CollectiveGather", "CollectiveReduce"]
    reduce_op = next(op for op in graph.get_operations() if op.type == "CollectiveReduce")
    assert (reduce_op.get_attr("group_size"), reduce_op.get_attr("timeout_seconds")) == (2, 1836.0)
    assert reduce_op.get_attr("_npu_hccl_group") == b"hccl_world_group"


def _collectives(graph):
    return {op.type: op for op in graph.get_operations() if op.type.startswith("Collective")}


@pytest.mark.parametrize("backend", ["gpu", "cpu"])
def test_on_the_gpu_backend_tensorflows_collectives_run_on_the_gpu_through_nccl(two_ranks, monkeypatch, backend):
    # No GPU here: the graph is only built, as a process on the gpu backend would build it. On the cpu backend,
    # TensorFlow's ops only when asked for (ranks of one host take the segment).
    monkeypatch.setattr(device_target, "process_target", lambda environ=None: backend)
    if backend == "cpu":
        monkeypatch.setenv(shm_segment.PATH_VARIABLE, "tf")
    with tf.Graph().as_default() as graph:
        hccl_ops.allreduce(X, "sum")
        hccl_ops.allgather([X], 2)
        hccl_ops.broadcast([tf.constant(X)], 1)
        hccl_ops.reduce_scatter(tf.zeros([4]), "max", 2)
    ops = _collectives(graph)
    assert sorted(ops) == ["CollectiveAllToAllV2", "CollectiveBcastRecv", "CollectiveGather", "CollectiveReduce"]
    device, hint = ("/device:GPU:0", b"nccl") if backend == "gpu" else ("/device:CPU:0", b"auto")
    for op in ops.values():
        assert (op.device, op.get_attr("communication_hint")) == (device, hint), op.type


def test_the_gpu_backend_leaves_the_segment_unless_shm_is_asked_for(two_ranks, monkeypatch):
    monkeypatch.setattr(device_target, "process_target", lambda environ=None: "gpu")
    fd = shm_segment.create()
    try:
        monkeypatch.setenv(shm_segment.FD_VARIABLE, str(fd))
        with tf.Graph().as_default() as graph:
            hccl_ops.allreduce(X, "sum")
        assert list(_collectives(graph)) == ["CollectiveReduce"]  # auto: NCCL for GPU tensors
        monkeypatch.setenv(shm_segment.PATH_VARIABLE, "shm")
        with tf.Graph().as_default() as graph:
            hccl_ops.allreduce(X, "sum")
        shm = [op for op in graph.get_operations() if op.type == "HcomShmAllReduce"]
        assert len(shm) == 1 and shm[0].device == "/device:CPU:0"
    finally:
        os.close(fd)


def test_one_rank_world_computes_locally():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
        ops = {
            "allreduce": hccl_ops.allreduce(x, "max"),
            "allgather": hccl_ops.allgather(x, 1),
            "broadcast": hccl_ops.broadcast([x, tf.constant([7], tf.int8)], 0),
            "reduce": hccl_ops.reduce(x, "sum", 0),
            "reduce_scatter": hccl_ops.reduce_scatter(x, "sum", 1),
            "all_to_all_v": hccl_ops.all_to_all_v(tf.range(6), [3], [2], [3], [1]),
            "all_to_all_v_c": hccl_ops.all_to_all_v_c(tf.range(4, dtype=tf.int64), [[2]], 0),
            "grad": tf.gradients(tf.reduce_sum(hccl_ops.allreduce(x, "sum") * 3.0), x)[0],
        }
        assert not [op for op in tf.compat.v1.get_default_graph().get_operations() if op.type.startswith("Collective")]
        with tf.compat.v1.Session(config=npu_config()) as sess:
            got = sess.run(ops)
    expected = np.array([[1.0, -2.0], [3.0, 4.0]])
    for name in ("allreduce", "allgather", "reduce", "reduce_scatter"):
        np.testing.assert_array_equal(got[name], expected)
    np.testing.assert_array_equal(got["broadcast"][0], expected)
    assert got["broadcast"][1].tolist() == [7]
    assert got["all_to_all_v"].tolist() == [0, 2, 3, 4]
    assert got["all_to_all_v_c"].tolist() == [0, 1]
    np.testing.assert_array_equal(got["grad"], np.full((2, 2), 3.0))


@pytest.mark.parametrize(
    "function",
    [
        hccl_ops.remote_read,
        hccl_ops.remote_ref_read,
        hccl_ops.remote_write,
        hccl_ops.remote_scatter_write,
        hccl_ops.gather_all_to_all_v,
        npu_plugin.init_rdma_pool,
        npu_plugin.rdma_remote_register,
        npu_plugin.rdma_remote_init,
        npu_plugin.get_var_addr_and_size,
        npu_plugin.malloc_shared_memory,
        npu_plugin.get_rdma_cache,
    ],
)
def test_remote_memory_access_is_not_supported_off_the_npu(function):
    with pytest.raises(
        NotSupportedOffNpuError,
        match=rf"\.{function.__name__} is not supported off the NPU: it accesses NPU memory by device",
    ):
        function()
