"""Mixed precision modes (the precision pass's own region): dtypes in the executed graph, values, the lists,
bf16, modify_mixlist, keep_dtype, real conversion, and the graphs real scripts build."""

import json

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.precision import bf16, casts_to, fp16, rounds_through, run_executed, saturating
from tensorflow.python.grappler import tf_optimizer

from npu_bridge.core.plan import pass_contract
from npu_bridge.core.precision import mixlist
from npu_bridge.core.runtime import doc_blocks, system
from npu_bridge.core.runtime.errors import NpuOptionError

v1 = tf.compat.v1
RNG = np.random.RandomState(1)
X = RNG.randn(8, 64).astype(np.float32)
W1 = RNG.randn(64, 32).astype(np.float32)
W2 = RNG.randn(32, 4).astype(np.float32)


def mlp(keep_first=False):
    """x -> MatMul -> Relu -> MatMul -> Sum; returns (graph, first matmul's value, loss, feed)."""
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
        assert rounds_through(source, tf.float16)
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


def test_mixlist_edits_follow_ascend_list_semantics(tmp_path):
    path = write_mixlist(
        tmp_path,
        {
            "black-list": {"to-add": ["Mul"], "to-remove": ["Exp"]},
            "white-list": {"to-add": ["Relu"], "to-remove": ["Conv2D"]},
            "gray-list": {"to-add": ["Sub"], "to-remove": ["Relu"]},
        },
    )
    assert mixlist.load(path) == {"Mul": "black", "Exp": "gray", "Relu": "white", "Conv2D": "gray", "Sub": "gray"}
    lists = mixlist.session_lists(path)
    assert "Relu" in lists.white and "Conv2D" not in lists.white and "MatMul" in lists.white
    assert "Mul" in lists.black and "Exp" not in lists.black and "Log" in lists.black
    defaults = mixlist.session_lists(None)
    assert set(defaults.white) == set(mixlist.DEFAULT_WHITE) and set(defaults.black) == set(mixlist.DEFAULT_BLACK)


def test_default_lists_are_documented_from_their_source():
    assert doc_blocks.read_block(mixlist.DOCS_BLOCK, mixlist.DOCS_PAGE) == mixlist.markdown()


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


def optimized(graph, fetch, **plan_fields):
    """The graph NpuOptimizer makes of ``graph`` (fetching ``fetch``) with a pass plan of ``plan_fields``."""
    meta = v1.train.export_meta_graph(graph=graph)
    meta.collection_def["train_op"].node_list.value.append(fetch.name)
    config = v1.ConfigProto()
    config.graph_options.rewrite_options.min_graph_nodes = -1
    entry = config.graph_options.rewrite_options.custom_optimizers.add()
    entry.name = "NpuOptimizer"
    pass_contract.write(entry, pass_contract.PassPlan(validated=True, precision_rewrite=True, **plan_fields))
    return tf_optimizer.OptimizeGraph(config, meta)


def test_gpu_style_conversion_really_computes_the_region_in_float16_and_keeps_kept_ops():
    graph = tf.Graph()
    with graph.as_default(), tf.device("/cpu:0"):
        x = v1.placeholder(tf.float32, [4, 8], name="x")
        with graph._attr_scope({"_keep_dtype": v1.AttrValue(i=1)}):
            kept = tf.matmul(x, tf.ones([8, 8]), name="kept")
        mixed = tf.matmul(tf.nn.relu(kept), tf.ones([8, 2]) * 0.1, name="mixed")
        loss = tf.reduce_sum(tf.exp(mixed), name="loss")
    lists = mixlist.session_lists(None)
    graph_def = optimized(
        graph, loss, mixed_dtype="float16", mixed_convert=True, mixed_white=lists.white, mixed_black=lists.black
    )
    types = {n.name: tf.as_dtype(n.attr["T"].type).name for n in graph_def.node if "T" in n.attr}
    assert types["kept"] == "float32" and types["mixed"] == "float16" and types["loss"] == "float32"
    assert types["Exp"] == "float32"  # black list: read through a cast back to float32
    with tf.Graph().as_default() as rerun:
        tf.graph_util.import_graph_def(graph_def, name="")
    with v1.Session(graph=rerun) as sess:
        value = sess.run("loss:0", {"x:0": np.ones([4, 8], np.float32)})
    np.testing.assert_allclose(value, 4 * 2 * np.exp(fp16(8 * 8 * 0.1)), rtol=1e-3)


def test_dense_softmax_cross_entropy_trains_under_every_mixed_mode():
    # The graph that crashed TensorFlow's own CPU mixed-precision pass (std::out_of_range, process killed).
    rng = np.random.RandomState(0)
    images = rng.rand(32, 20).astype(np.float32)
    labels = np.eye(4, dtype=np.float32)[rng.randint(0, 4, 32)]
    for mode in ("allow_mix_precision", "allow_mix_precision_bf16", "mixed_float16"):
        graph = tf.Graph()
        with graph.as_default():
            v1.set_random_seed(1)
            x = tf.constant(images)
            hidden = tf.nn.relu(v1.layers.dense(x, 16))
            logits = v1.layers.dense(tf.nn.dropout(hidden, rate=0.1), 4)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
            train = v1.train.GradientDescentOptimizer(0.5).minimize(loss)
            init = v1.global_variables_initializer()
        key = "precision_mode_v2" if mode == "mixed_float16" else "precision_mode"
        system.shutdown()  # precision_mode is an init option: the first initialization fixes it
        with v1.Session(graph=graph, config=npu_config(**{key: mode})) as sess:
            sess.run(init)
            losses = [sess.run([train, loss])[1] for _ in range(30)]
            rounded = sess.run(logits)
        assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], (mode, losses)
        round_trip = bf16 if "bf16" in mode else fp16
        np.testing.assert_array_equal(round_trip(rounded), rounded)  # BiasAdd follows its MatMul


def test_region_follows_while_loops_and_conds():
    w = (np.random.RandomState(2).randn(4, 4) * 0.3).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [4, 4])
        flag = v1.placeholder(tf.bool, [])
        start = tf.cond(flag, lambda: tf.matmul(x, w), lambda: x * 2.0)
        _, looped = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w))), [0, start])
    value, _ = run_executed(graph, looped, {x: X[:4, :4], flag: True}, precision_mode="allow_mix_precision")
    np.testing.assert_array_equal(fp16(value), value)  # Tanh follows the MatMul inside the loop
    expected = fp16(fp16(X[:4, :4]) @ fp16(w))
    for _ in range(3):
        expected = fp16(np.tanh(fp16(expected @ fp16(w))))
    np.testing.assert_allclose(value, expected, atol=2e-3)


def test_simulated_backend_saturates_the_fp16_values_of_the_mixed_region():
    graph, _, loss, feed = mlp()
    _, executed = run_executed(graph, loss, feed, precision_mode="allow_mix_precision", device_target="ascend")
    assert casts_to(executed, tf.float16) and set(casts_to(executed, tf.float16)) <= saturating(executed)


def test_gpu_backend_needs_a_gpu():
    if tf.config.list_physical_devices("GPU"):
        pytest.skip("this machine has a GPU")
    with pytest.raises(NpuOptionError, match="device_target.*'gpu'.*TensorFlow sees no GPU"):
        v1.Session(config=npu_config(device_target="gpu"))
