"""npu_scope attribute scopes, util helpers, NPUStrategy and job information."""

import os

import pytest
import tensorflow as tf
from helpers.config import npu_config
from tensorflow.core.framework import attr_value_pb2

from npu_bridge.core.world import world
from npu_bridge.estimator.npu import npu_common, npu_scope, npu_strategy, util
from npu_bridge.estimator.npu.npu_config import ExperimentalConfig, GraphMemoryOptimizeConfig, NpuExecutePlacement

v1 = tf.compat.v1


def attr(op, name):
    return op.node_def.attr[name] if name in op.node_def.attr else None


# scope factory, expected {attr: AttrValue}
SCOPES = [
    (npu_scope.keep_dtype_scope, {"_keep_dtype": attr_value_pb2.AttrValue(i=1)}),
    (npu_scope.without_npu_compile_scope, {"_without_npu_compile": attr_value_pb2.AttrValue(b=True)}),
    (
        lambda: npu_scope.npu_variable_scope(NpuExecutePlacement.HOST),
        {"_variable_placement": attr_value_pb2.AttrValue(s=b"host")},
    ),
    (lambda: npu_scope.npu_stage_scope(2), {"_stage_level": attr_value_pb2.AttrValue(i=2)}),
    (
        lambda: npu_scope.npu_weight_prefetch_scope(1, 1024),
        {"_buffer_pool_id": attr_value_pb2.AttrValue(i=1), "_buffer_pool_size": attr_value_pb2.AttrValue(i=1024)},
    ),
    (
        lambda: npu_scope.op_specified_engine_scope("AIcoreEngine", "AIcoreLib"),
        {"_specified_engine_name": attr_value_pb2.AttrValue(s=b"AIcoreEngine")},
    ),
    (
        lambda: npu_scope.limit_core_num_scope("2", "4"),
        {"_op_aicore_num": attr_value_pb2.AttrValue(s=b"2"), "_op_vectorcore_num": attr_value_pb2.AttrValue(s=b"4")},
    ),
    (npu_scope.disable_autofuse, {"_disable_autofuse": attr_value_pb2.AttrValue(b=True)}),
]


@pytest.mark.parametrize("scope, expected", SCOPES)
def test_scopes_stamp_their_attributes_inside_only(scope, expected):
    with tf.Graph().as_default():
        with scope():
            inside = tf.constant(1.0) * 2.0
        outside = tf.constant(1.0) * 3.0
    for name, value in expected.items():
        assert attr(inside.op, name) == value
        assert attr(outside.op, name) is None


def test_recompute_scope_is_a_name_scope():
    with tf.Graph().as_default():
        with npu_scope.npu_recompute_scope():
            op = tf.constant(1.0, name="c")
    assert op.op.name == "NpuRecompute/c"


def test_scope_arguments_are_checked():
    with pytest.raises(ValueError, match="placement must be an NpuExecutePlacement"):
        npu_scope.npu_variable_scope("host")
    with pytest.raises(ValueError, match="stage must be an int >= 0"):
        npu_scope.npu_stage_scope(-1)


@pytest.mark.op_types
def test_keep_dtype_reaches_the_graph_tensorflow_executes():
    graph = tf.Graph()
    with graph.as_default():
        a = v1.placeholder(tf.float32, [2, 2])
        with npu_scope.keep_dtype_scope():
            kept = tf.matmul(a, a, name="kept")
        plain = tf.matmul(kept, a, name="plain")
        util.keep_tensors_dtypes(graph, ["plain:0"])
    metadata = v1.RunMetadata()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        sess.run(
            plain,
            {a: [[1.0, 0.0], [0.0, 1.0]]},
            options=v1.RunOptions(output_partition_graphs=True),
            run_metadata=metadata,
        )
    executed = {node.name: node for g in metadata.partition_graphs for node in g.node}
    assert executed["kept"].attr["_keep_dtype"].i == 1
    assert executed["plain"].attr["_keep_dtype"].i == 1


def test_set_graph_exec_config_stamps_the_fetches():
    with tf.Graph().as_default():
        loss = tf.constant(1.0, name="loss") * 2.0
        train = tf.no_op(name="train")
        experimental = ExperimentalConfig(graph_memory_optimize_config=GraphMemoryOptimizeConfig(recompute="auto"))
        assert util.set_graph_exec_config(
            [loss, "train"],
            dynamic_input=True,
            dynamic_graph_execute_mode="lazy_recompile",
            dynamic_inputs_shape_range="data:[1~4]",
            is_train_graph=True,
            experimental_config=experimental,
        ) == [loss, "train"]
        for op in (loss.op, train):
            assert attr(op, "_graph_dynamic_input").b
            assert attr(op, "_graph_dynamic_graph_execute_mode").s == b"lazy_recompile"
            assert attr(op, "_graph_dynamic_inputs_shape_range").s == b"data:[1~4]"
            assert attr(op, "_is_train_graph").b and attr(op, "_recompute_mode").s == b"auto"
        with pytest.raises(ValueError, match="dynamic_graph_execute_mode should be lazy_recompile or dynamic_execute"):
            util.set_graph_exec_config(loss, dynamic_graph_execute_mode="static")
        with pytest.raises(ValueError, match="fetch must be an Operation, Tensor, name"):
            util.set_graph_exec_config(3)


def test_op_shape_hints():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [None, 3])
        util.set_op_tensor_max_range(x, [64, 3])
        util.set_op_input_tensor_multi_dims(x, "x:-1,3", "1,3;8,3")
        util.set_op_tensor_max_size(x, 4096)
        assert attr(x.op, "_op_max_shape").s == b"64,3"
        assert attr(x.op, "_input_dims").s == b"1,3;8,3"
        assert attr(x.op, "_op_max_size").i == 4096
        with pytest.raises(ValueError, match="max_size must be a positive int"):
            util.set_op_tensor_max_size(x, 0)


def test_small_util_helpers(monkeypatch):
    graph = tf.Graph()
    with graph.as_default():
        var = v1.get_variable("v", initializer=3.0)
        loop_var = util.create_or_get_var("loop_cond")
        assert util.create_or_get_var("loop_cond", graph) is loop_var
        assert loop_var.op.name == "npu_runconfig/loop_cond"
        init = util.variable_initializer_in_host([var, loop_var])
        with v1.Session() as sess:
            sess.run(init)
            assert util.npu_compile(sess, var.read_value()) == [3.0]
    assert util.get_ranksize() == "1"
    monkeypatch.setenv("RANK_SIZE", "4")
    assert util.get_ranksize() == "4"
    monkeypatch.setenv("CM_WORKER_SIZE", "4")
    with pytest.raises(ValueError, match="RANK_SIZE and CM_WORK_SIZE cannot be configured at the same time") as e:
        util.get_ranksize()
    with pytest.raises(ValueError) as from_world:  # one check, one message, whoever asks
        world.load_world(dict(os.environ, CM_CHIEF_IP="127.0.0.1", CM_CHIEF_PORT="6000", CM_CHIEF_DEVICE="0"))
    assert str(e.value) == str(from_world.value)
    assert util.check_profiling_options(["training_trace", "op_trace"]) == "training_trace:op_trace"
    with pytest.raises(ValueError, match="profiling options must be in"):
        util.check_profiling_options(["task_trace"])


def test_job_information_from_the_environment(monkeypatch):
    monkeypatch.setenv("JOB_ID", "42")
    monkeypatch.setenv("RANK_ID", "3")
    monkeypatch.setenv("RANK_SIZE", "8")
    monkeypatch.setenv("LOCAL_CHECKPOINT_DIR", "/ckpt")
    info = npu_common.NPUBasics("").jobinfo
    assert (info.job_id, info.device_info.index, info.rank_size, info.local_checkpoint_dir) == ("42", "3", 8, "/ckpt")
    monkeypatch.setenv("RANK_SIZE", "eight")
    with pytest.raises(ValueError, match="RANK_SIZE / CM_WORKER_SIZE must be a positive integer, got 'eight'"):
        npu_common.NPUBasics()


@pytest.mark.parametrize("value", ["٨", "1_0", "9" * 30, "32769", "0"])
def test_job_information_rank_size_is_an_ascii_integer_of_the_world_range(value, monkeypatch):
    monkeypatch.setenv("JOB_ID", "42")
    monkeypatch.setenv("RANK_SIZE", value)
    with pytest.raises(ValueError, match=f"RANK_SIZE / CM_WORKER_SIZE must be a positive integer, got '{value}'"):
        npu_common.NPUBasics()


def test_job_information_empty_rank_size_is_unset(monkeypatch):
    monkeypatch.setenv("JOB_ID", "42")
    monkeypatch.setenv("RANK_SIZE", "")
    assert npu_common.NPUBasics().jobinfo.rank_size == 1


def test_npu_strategy_shards_datasets_by_rank(monkeypatch):
    with pytest.raises(ValueError, match='"device" only support "/cpu:0"'):
        npu_strategy.NPUStrategy("/gpu:0")
    monkeypatch.setenv("RANK_SIZE", "2")
    monkeypatch.setenv("RANK_ID", "1")
    with tf.Graph().as_default():
        strategy = npu_strategy.NPUStrategy()
        assert strategy.num_replicas_in_sync == 2
        iterator = strategy.make_dataset_iterator(tf.data.Dataset.range(8))
        element = iterator.get_next()
        with v1.Session() as sess:
            sess.run(iterator.initializer)
            assert [sess.run(element) for _ in range(4)] == [1, 3, 5, 7]
