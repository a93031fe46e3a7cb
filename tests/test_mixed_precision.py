"""Mixed precision modes on TensorFlow's AMP pass: dtypes in the executed graph, bf16, modify_mixlist, keep_dtype."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf
from conftest import npu_config, run_python
from precision_helpers import bf16, casts_to, fp16, run_executed

from npu_bridge.core.precision import mixlist
from npu_bridge.core.runtime import system
from npu_bridge.core.runtime.errors import NpuOptionError

v1 = tf.compat.v1
RNG = np.random.RandomState(1)
X = RNG.randn(8, 64).astype(np.float32)
W1 = RNG.randn(64, 32).astype(np.float32)
W2 = RNG.randn(32, 4).astype(np.float32)


def mlp(keep_first=False):
    """x -> MatMul -> Relu -> MatMul -> Sum; returns (graph, first matmul's value, loss, feed).

    The value is read through an Identity: TensorFlow's AMP pass leaves fetched nodes alone.
    """
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, X.shape)
        w1 = v1.placeholder(tf.float32, W1.shape)
        if keep_first:
            with graph._attr_scope({"_keep_dtype": v1.AttrValue(i=1)}):
                first = tf.matmul(x, w1, name="first")
        else:
            first = tf.matmul(x, w1, name="first")
        loss = tf.reduce_sum(tf.matmul(tf.nn.relu(first), tf.constant(W2)), name="loss")
    return graph, tf.identity(first), loss, {x: X, w1: W1}


def feeding(executed, name):
    """The executed nodes that the node ``name`` reads."""
    by_name = {n.name: n for n in executed}
    return [by_name[i.split(":")[0]] for i in by_name[name].input if not i.startswith("^")]


@pytest.mark.parametrize(
    "options",
    [
        {"precision_mode": "allow_mix_precision"},
        {"precision_mode": "allow_mix_precision_fp16"},
        {"precision_mode_v2": "mixed_float16"},
    ],
)
def test_float16_mixed_modes_run_the_allow_listed_region_in_fp16(options):
    graph, first, loss, feed = mlp()
    (first_value, _), executed = run_executed(graph, [first, loss], feed, **options)
    assert casts_to(executed, tf.float16)
    for source in feeding(executed, "first"):  # the MatMul reads fp16 values
        assert source.op == "Cast" and source.attr["SrcT"].type == tf.float16.as_datatype_enum
    np.testing.assert_array_equal(fp16(first_value), first_value)  # and its output is fp16
    np.testing.assert_allclose(first_value, fp16(fp16(X) @ fp16(W1)), rtol=1e-3)


@pytest.mark.parametrize(
    "options", [{"precision_mode": "allow_mix_precision_bf16"}, {"precision_mode_v2": "mixed_bfloat16"}]
)
def test_bfloat16_mixed_modes_round_the_region_through_bfloat16(options):
    graph, first, loss, feed = mlp()
    (first_value, _), executed = run_executed(graph, [first, loss], feed, **options)
    assert casts_to(executed, tf.bfloat16) and not casts_to(executed, tf.float16)
    np.testing.assert_array_equal(bf16(first_value), first_value)
    np.testing.assert_allclose(first_value, bf16(bf16(X) @ bf16(W1)), rtol=8e-3)


def test_bfloat16_region_stays_consistent_through_reshapes_of_a_training_graph():
    graph = tf.Graph()
    with graph.as_default():
        images = v1.placeholder(tf.float32, [4, 8, 8, 1])
        kernel = v1.get_variable("kernel", [3, 3, 1, 4])
        dense = v1.get_variable("dense", [256, 2])
        hidden = tf.nn.relu(tf.nn.conv2d(images, kernel, 1, "SAME"))
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.reshape(hidden, [4, 256]), dense)))
        train = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = v1.global_variables_initializer()
    with v1.Session(graph=graph, config=npu_config(precision_mode="allow_mix_precision_bf16")) as sess:
        sess.run(init)
        run_metadata = v1.RunMetadata()
        sess.run(
            train,
            {images: RNG.rand(4, 8, 8, 1)},
            options=v1.RunOptions(output_partition_graphs=True),
            run_metadata=run_metadata,
        )
    executed = [n for g in run_metadata.partition_graphs for n in g.node]
    assert len(casts_to(executed, tf.bfloat16)) > 4  # the rewritten graph ran (not TensorFlow's fallback)


def write_mixlist(tmp_path, content):
    path = tmp_path / "mixlist.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_modify_mixlist_black_list_keeps_an_op_in_float32(tmp_path):
    path = write_mixlist(tmp_path, {"black-list": {"to-add": ["MatMulV2"]}})
    graph, first, loss, feed = mlp()
    (first_value, _), executed = run_executed(
        graph, [first, loss], feed, precision_mode="allow_mix_precision", modify_mixlist=path
    )
    assert not casts_to(executed, tf.float16)
    np.testing.assert_allclose(first_value, X @ W1, rtol=1e-5, atol=1e-4)
    variable = mixlist.ENV_PREFIX + "DENYLIST_ADD"
    assert os.environ[variable] == "MatMul"
    system.shutdown()  # modify_mixlist is an init option: a new initialization may drop it
    run_executed(graph, loss, feed, precision_mode="allow_mix_precision")
    assert variable not in os.environ


def test_mixlist_placement_follows_ascend_list_semantics(tmp_path):
    path = write_mixlist(
        tmp_path,
        {
            "black-list": {"to-add": ["Mul"], "to-remove": ["Exp"]},
            "white-list": {"to-add": ["Relu"], "to-remove": ["Conv2D"]},
            "gray-list": {"to-add": ["Sub"], "to-remove": ["Relu"]},
        },
    )
    placement = mixlist.load(path)
    assert placement == {
        "Mul": "DENYLIST",
        "Exp": "INFERLIST",
        "Relu": "ALLOWLIST",
        "Conv2D": "INFERLIST",
        "Sub": "INFERLIST",
    }
    lists = mixlist.environment_for(placement)
    assert lists["DENYLIST_ADD"] == "Mul" and lists["ALLOWLIST_ADD"] == "Relu"
    assert lists["INFERLIST_ADD"] == "Conv2D,Exp,Sub"
    assert "Mul" in lists["ALLOWLIST_REMOVE"].split(",") and "Relu" in lists["DENYLIST_REMOVE"].split(",")


@pytest.mark.parametrize(
    "content, error",
    [
        ("{not json", "not valid JSON"),
        ({"red-list": {}}, "unknown key 'red-list'"),
        ({"black-list": {"to-append": ["A"]}}, "unknown key 'to-append' in black-list"),
        ({"white-list": {"to-add": "MatMul"}}, "white-list.to-add must be a list"),
        (
            {"white-list": {"to-add": ["MatMul"]}, "black-list": {"to-add": ["MatMul"]}},
            "Operation to-add black-list and to-add white-list for op MatMul is invalid",
        ),
        ({"gray-list": {"to-remove": ["MatMul"]}}, "Operation to-remove gray-list for op MatMul is invalid"),
    ],
)
def test_bad_modify_mixlist_fails_at_session_creation(tmp_path, content, error):
    path = write_mixlist(tmp_path, content)
    with pytest.raises(NpuOptionError, match=f"modify_mixlist.*{error}"):
        v1.Session(config=npu_config(precision_mode="allow_mix_precision", modify_mixlist=path))


def test_modify_mixlist_needs_a_mixed_mode(tmp_path):
    path = write_mixlist(tmp_path, {"black-list": {"to-add": ["MatMul"]}})
    with pytest.raises(NpuOptionError, match="modify_mixlist is assigned, please ensure precision_mode"):
        v1.Session(config=npu_config(precision_mode="allow_fp32_to_fp16", modify_mixlist=path))


def test_keep_dtype_op_computes_in_float32_inside_a_mixed_region():
    graph, first, loss, feed = mlp(keep_first=True)
    (first_value, _), executed = run_executed(graph, [first, loss], feed, precision_mode="allow_mix_precision")
    np.testing.assert_allclose(first_value, X @ W1, rtol=1e-5, atol=1e-4)
    assert [s.op for s in feeding(executed, "first")] == ["_Arg", "_Arg"]
    assert casts_to(executed, tf.float16)  # the rest of the network is still mixed


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.op_types
def test_keep_dtype_op_is_converted_back_when_amp_really_converts_it():
    # GPU-style AMP: ops really become float16 (forced on CPU here); a kept op is converted back to float32.
    result = run_python(
        """
        import numpy as np, tensorflow as tf
        import npu_bridge
        from npu_bridge.core.runtime.executed_op_types import user_op_type
        tf.compat.v1.disable_eager_execution()
        v1 = tf.compat.v1
        graph = tf.Graph()
        with graph.as_default():
            x = v1.placeholder(tf.float32, [4, 8])
            with graph._attr_scope({"_keep_dtype": v1.AttrValue(i=1)}):
                kept = tf.matmul(x, tf.ones([8, 8]), name="kept")
            loss = tf.reduce_sum(tf.matmul(tf.nn.relu(kept), tf.ones([8, 2]), name="mixed"))
        config = v1.ConfigProto()
        entry = config.graph_options.rewrite_options.custom_optimizers.add()
        entry.name = "NpuOptimizer"
        entry.parameter_map["precision_mode"].s = b"allow_mix_precision"
        meta = v1.RunMetadata()
        with v1.Session(graph=graph, config=config) as sess:
            sess.run(loss, {x: np.ones([4, 8])}, options=v1.RunOptions(output_partition_graphs=True),
                     run_metadata=meta)
        types = {n.name: tf.as_dtype(n.attr["T"].type).name for g in meta.partition_graphs for n in g.node
                 if user_op_type(n.op) == "MatMul"}  # oneDNN runs the float32 one as _MklMatMul
        print("types", types["kept"], types["mixed"])
    """,
        env={"TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_EMULATE_FP16": "0"},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "types float32 float16" in result.stdout


def test_simulated_backend_saturates_the_fp16_values_of_the_mixed_region():
    graph, _, loss, feed = mlp()
    _, executed = run_executed(graph, loss, feed, precision_mode="allow_mix_precision", device_target="ascend")
    saturated = {n.input[0] for n in executed if n.op == "NpuSaturateFp16"}
    assert casts_to(executed, tf.float16) and set(casts_to(executed, tf.float16)) <= saturated


def test_gpu_backend_needs_a_gpu():
    if tf.config.list_physical_devices("GPU"):
        pytest.skip("this machine has a GPU")
    with pytest.raises(NpuOptionError, match="device_target.*'gpu'.*TensorFlow sees no GPU"):
        v1.Session(config=npu_config(device_target="gpu"))
