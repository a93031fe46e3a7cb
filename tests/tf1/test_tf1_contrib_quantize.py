"""``tf.contrib.quantize`` of the TF1 mode: the graph matcher, the fake quantization it inserts (op types, names,
ranges and values against a NumPy fake quantization), batch norm folding, ``quant_delay``, the eval graph reading
the learned ranges, errors, and a conv net trained and evaluated in the mode."""

import contextlib

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf
import tf_slim as slim

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1 import quantize
from npu_bridge.core.tf1.quantize import graph_matcher

RNG = np.random.RandomState(5)
v1 = tf.compat.v1


def np_fake_quant(x, low, high, bits=8, narrow=False):
    """TensorFlow's FakeQuantWithMinMaxVars: the range nudged so that 0 is exact, then rounding to the grid."""
    quant_min, quant_max = (1 if narrow else 0), 2**bits - 1
    scale = (high - low) / (quant_max - quant_min)
    zero = np.clip(np.round(quant_min - low / scale), quant_min, quant_max)
    nudged_min, nudged_max = (quant_min - zero) * scale, (quant_max - zero) * scale
    clamped = np.clip(x, nudged_min, nudged_max)
    return np.floor((clamped - nudged_min) / scale + 0.5) * scale + nudged_min


def conv_net(images, use_bias=True):
    """conv (3x3, 4 filters) + bias + relu in scope ``net/conv``, on reference variables as in the TF1 mode."""
    with v1.variable_scope("net", use_resource=False):
        with v1.variable_scope("conv"):
            weights = v1.get_variable("weights", [3, 3, 1, 4], initializer=v1.random_normal_initializer(seed=1))
            output = tf.nn.conv2d(images, weights, [1, 1, 1, 1], "SAME")
            if use_bias:
                output = tf.nn.bias_add(output, v1.get_variable("biases", [4], initializer=v1.ones_initializer()))
            return tf.nn.relu(output), weights


@contextlib.contextmanager
def graph_of_ref_variables():
    """A new default graph whose variables are reference variables, as in the TF1 mode (per graph: no leak)."""
    with tf.Graph().as_default() as graph:
        v1.get_variable_scope().set_use_resource(False)
        yield graph


def fake_quants(graph):
    return {op.name: op for op in graph.get_operations() if op.type == "FakeQuantWithMinMaxVars"}


# ---------------------------------------------------------------- the graph matcher


def test_graph_matcher_matches_types_inputs_in_any_order_and_one_of_several():
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, [2, 2], name="x")
        y = tf.matmul(x, tf.constant(np.eye(2, dtype=np.float32), name="w"), name="mm")
        tf.nn.relu(tf.add(tf.constant(1.0, name="one"), y, name="sum"), name="act")
    matmul = graph_matcher.OpTypePattern("MatMul", name="layer")
    add_ordered = graph_matcher.OpTypePattern("Add|AddV2", inputs=[matmul, "*"])
    add_any_order = graph_matcher.OpTypePattern("Add|AddV2", inputs=[matmul, "*"], ordered_inputs=False)
    act = graph_matcher.OpTypePattern("Relu6|Relu", inputs=[graph_matcher.OneofPattern([add_ordered, add_any_order])])
    results = list(graph_matcher.GraphMatcher(act).match_graph(graph))
    assert len(results) == 1
    result = results[0]
    assert result.get_op(act).name == "act"
    assert result.get_op("layer").name == "mm" and result.get_tensor(matmul).name == "mm:0"
    assert result.get_op(add_any_order).name == "sum" and result.get_op(add_ordered) is None
    assert result.get_op("nothing") is None
    assert list(graph_matcher.GraphMatcher(add_ordered).match_graph(graph)) == []


def test_graph_matcher_refuses_bad_patterns_naming_them():
    with pytest.raises(NpuArgumentError, match="at most 8 inputs are allowed when ordered_inputs is False, given 9"):
        graph_matcher.OpTypePattern("AddN", inputs=["*"] * 9, ordered_inputs=False)
    with pytest.raises(NpuArgumentTypeError, match="op_type must be a string"):
        graph_matcher.OpTypePattern(3)
    with pytest.raises(NpuArgumentTypeError, match="pattern must be a Pattern, given 'Relu'"):
        graph_matcher.GraphMatcher("Relu")


# ---------------------------------------------------------------- the training rewrite


def test_training_graph_quantizes_weights_and_activations_with_1_15_names():
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [2, 5, 5, 1])
        relu, weights = conv_net(images)
        quantize.create_training_graph()
        found = fake_quants(graph)
        assert sorted(found) == [
            "net/conv/act_quant/FakeQuantWithMinMaxVars",
            "net/conv/weights_quant/FakeQuantWithMinMaxVars",
        ]
        weights_quant = found["net/conv/weights_quant/FakeQuantWithMinMaxVars"]
        assert [t.name for t in weights_quant.inputs] == [
            "net/conv/weights/read:0",
            "net/conv/weights_quant/AssignMinLast:0",
            "net/conv/weights_quant/AssignMaxLast:0",
        ]
        assert weights_quant.get_attr("narrow_range") and weights_quant.get_attr("num_bits") == 8
        act_quant = found["net/conv/act_quant/FakeQuantWithMinMaxVars"]
        assert act_quant.inputs[0] is relu and act_quant.inputs[1].op.name == "net/conv/act_quant/AssignMinEma"
        assert not act_quant.get_attr("narrow_range")
        conv = graph.get_operation_by_name("net/conv/Conv2D")
        assert conv.inputs[1] is weights_quant.outputs[0]  # the layer reads the quantized weights
        names = {v.op.name for v in v1.global_variables()}
        assert {"net/conv/weights_quant/min", "net/conv/weights_quant/max"} <= names
        assert {"net/conv/act_quant/min", "net/conv/act_quant/max"} <= names
        assert {v.op.name for v in v1.trainable_variables()} == {"net/conv/weights", "net/conv/biases"}


def test_training_ranges_follow_the_weights_and_an_average_of_the_activations():
    data = RNG.randn(2, 5, 5, 1).astype(np.float32)
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [2, 5, 5, 1])
        relu, weights = conv_net(images)
        consumer = tf.identity(relu, name="next_layer")
        quantize.create_training_graph()
        ranges = [
            graph.get_tensor_by_name(f"net/conv/{q}_quant/{m}:0") for q in ("weights", "act") for m in ("min", "max")
        ]
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            w = session.run(weights)
            float_relu = session.run(relu, {images: data})
            quantized = session.run(consumer, {images: data})
            w_min, w_max, a_min, a_max = session.run(ranges)
            session.run(consumer, {images: data * 2})
            a_max_2 = session.run(ranges[3])
    assert [float(w_min), float(w_max)] == pytest.approx([min(w.min(), 0), max(w.max(), 0)])
    # the first zero-debiased moving average is the batch's range; the next moves 0.1 % towards the new one
    assert [float(a_min), float(a_max)] == pytest.approx([0.0, float(float_relu.max())], rel=1e-4)
    np.testing.assert_allclose(quantized, np_fake_quant(float_relu, a_min, a_max), atol=1e-5)
    assert float_relu.max() < a_max_2 < 2 * float_relu.max()


def test_quant_delay_keeps_float_values_until_the_step_then_quantizes():
    data = RNG.randn(2, 5, 5, 1).astype(np.float32)
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [2, 5, 5, 1])
        relu, _ = conv_net(images)
        consumer = tf.identity(relu, name="next_layer")
        float_relu = tf.nn.relu(graph.get_tensor_by_name("net/conv/BiasAdd:0"))  # a second, unquantized copy
        quantize.create_training_graph(quant_delay=3)  # the step counts runs: 1, 2 float; 3 on quantized
        assert graph.get_operation_by_name("net/conv/act_quant/activate_quant").type == "GreaterEqual"
        assert "fake_quantization_step" in {v.op.name for v in v1.global_variables()}
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            runs = [session.run([consumer, float_relu], {images: data}) for _ in range(3)]
    np.testing.assert_array_equal(runs[0][0], runs[0][1])
    np.testing.assert_array_equal(runs[1][0], runs[1][1])
    assert not np.array_equal(runs[2][0], runs[2][1])
    np.testing.assert_allclose(runs[2][0], runs[2][1], atol=runs[2][1].max() / 255 + 1e-6)


def test_a_layer_without_activation_has_its_bias_add_quantized():
    with graph_of_ref_variables() as graph:
        x = v1.placeholder(tf.float32, [3, 4])
        with v1.variable_scope("logits", use_resource=False):
            w = v1.get_variable("kernel", [4, 2])
            b = v1.get_variable("bias", [2])
            tf.nn.softmax(tf.nn.bias_add(tf.matmul(x, w), b))
        quantize.experimental_create_training_graph(weight_bits=4, activation_bits=6)
        found = fake_quants(graph)
        assert found["logits/weights_quant/FakeQuantWithMinMaxVars"].get_attr("num_bits") == 4
        act = found["logits/act_quant/FakeQuantWithMinMaxVars"]
        assert act.inputs[0].op.name == "logits/BiasAdd" and act.get_attr("num_bits") == 6


def test_experimental_scope_rewrites_only_layers_inside_it():
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [2, 5, 5, 1])
        conv_net(images)
        with v1.variable_scope("other", use_resource=False):
            w = v1.get_variable("weights", [3, 3, 1, 2])
            tf.nn.relu(tf.nn.conv2d(images, w, [1, 1, 1, 1], "SAME"))
        quantize.experimental_create_training_graph(scope="other")
        assert sorted(fake_quants(graph)) == [
            "other/act_quant/FakeQuantWithMinMaxVars",
            "other/weights_quant/FakeQuantWithMinMaxVars",
        ]


# ---------------------------------------------------------------- batch norm folding


def bn_net(images, training):
    with v1.variable_scope("net", use_resource=False):
        h = v1.layers.conv2d(images, 4, 3, use_bias=False, name="conv")
        h = v1.layers.batch_normalization(h, training=training, name="bn")
        return tf.nn.relu(h)


@pytest.mark.parametrize("training", [True, False])
def test_fused_batch_norm_is_folded_into_the_conv_with_the_same_output(training):
    data = RNG.randn(4, 6, 6, 2).astype(np.float32)
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [4, 6, 6, 2])
        relu = bn_net(images, training)
        consumer = tf.identity(relu)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            for name, value in (("beta", 0.3), ("gamma", 1.5), ("moving_mean", 0.2), ("moving_variance", 2.0)):
                session.run(v1.assign(graph.get_tensor_by_name(f"net/bn/{name}:0"), np.full([4], value)))
            expected = session.run(consumer, {images: data})
            rewrite = (
                quantize.experimental_create_training_graph if training else quantize.experimental_create_eval_graph
            )
            rewrite(quant_delay=1000)  # folded, not quantized yet
            new = [v for v in v1.global_variables() if "quant" in v.op.name]
            session.run(v1.variables_initializer(new))
            folded = session.run(consumer, {images: data})
    weights_quant = graph.get_operation_by_name("net/conv/weights_quant/FakeQuantWithMinMaxVars")
    assert weights_quant.inputs[0].op.name == "net/conv/mul_fold"  # the folded weights are quantized
    assert graph.get_operation_by_name("net/conv/Conv2D_Fold").inputs[0] is images
    assert graph.get_operation_by_name("net/conv/add_fold").type == "Add"
    assert ("net/conv/post_conv_mul" in {op.name for op in graph.get_operations()}) == training
    np.testing.assert_allclose(folded, expected, rtol=1e-4, atol=1e-4)


def test_a_folded_batch_norm_trains_its_scale_and_offset():
    data = RNG.randn(4, 6, 6, 2).astype(np.float32)
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [4, 6, 6, 2])
        loss = tf.reduce_mean(tf.square(bn_net(images, True) - 1.0))
        quantize.create_training_graph()
        gamma, beta = (graph.get_tensor_by_name(f"net/bn/{n}:0") for n in ("gamma", "beta"))
        kernel = graph.get_tensor_by_name("net/conv/kernel:0")
        grads = tf.gradients(loss, [gamma, beta, kernel])
        assert all(g is not None for g in grads)
        train = v1.train.GradientDescentOptimizer(0.2).minimize(loss)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            first = session.run(loss, {images: data})
            for _ in range(30):
                session.run(train, {images: data})
            assert session.run(loss, {images: data}) < first * 0.9


# ---------------------------------------------------------------- the eval graph and errors


def test_eval_graph_reads_the_ranges_without_updating_them():
    data = RNG.randn(2, 5, 5, 1).astype(np.float32)
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [2, 5, 5, 1])
        relu, weights = conv_net(images)
        consumer = tf.identity(relu)
        quantize.create_eval_graph()
        act = fake_quants(graph)["net/conv/act_quant/FakeQuantWithMinMaxVars"]
        assert [t.op.type for t in act.inputs[1:]] == ["Identity", "Identity"]  # variable reads, no assignment
        assert not [op.name for op in graph.get_operations() if "AssignM" in op.name or "BatchM" in op.name]
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            session.run(v1.assign(graph.get_tensor_by_name("net/conv/act_quant/max:0"), 0.5))
            float_relu = session.run(graph.get_tensor_by_name("net/conv/Relu:0"), {images: data})
            out = session.run(consumer, {images: data})
            assert session.run(graph.get_tensor_by_name("net/conv/act_quant/max:0")) == 0.5
    np.testing.assert_allclose(out, np_fake_quant(float_relu, 0.0, 0.5), atol=1e-5)  # min starts at 0


def test_bad_arguments_and_graphs_with_optimizers_are_refused_naming_them():
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [2, 5, 5, 1])
        relu, _ = conv_net(images)
        with pytest.raises(NpuArgumentError, match=r"weight_bits must be an int in \[2, 16\], given 1"):
            quantize.experimental_create_training_graph(weight_bits=1)
        with pytest.raises(NpuArgumentTypeError, match="activation_bits must be an int in \\[2, 16\\], given 8.0"):
            quantize.experimental_create_eval_graph(activation_bits=8.0)
        with pytest.raises(NpuArgumentError, match="quant_delay must be an int >= 0 or None, given -1"):
            quantize.create_training_graph(quant_delay=-1)
        with pytest.raises(NpuArgumentTypeError, match="input_graph must be a tf.Graph or None"):
            quantize.create_eval_graph(input_graph="graph")
        with pytest.raises(NpuArgumentTypeError, match="symmetric must be True or False, given 1"):
            quantize.experimental_create_training_graph(symmetric=1)
        v1.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(relu))
        with pytest.raises(NpuArgumentError, match=r"Training op found in graph: .*ApplyGradientDescent"):
            quantize.create_training_graph(graph)
        assert fake_quants(graph) == {}


# ---------------------------------------------------------------- in the TF1 mode

SCRIPT = r"""
import json
import numpy as np
import tensorflow as tf
from tensorflow.contrib.quantize.python import graph_matcher
slim = tf.contrib.slim

def net(images, training):
    with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm, normalizer_params={"is_training": training}):
        h = slim.conv2d(images, 8, [3, 3], stride=2, scope="conv1")
        h = slim.conv2d(h, 8, [3, 3], stride=2, scope="conv2")
    h = tf.reduce_mean(h, [1, 2])
    return slim.fully_connected(h, 2, activation_fn=None, scope="logits")

rng = np.random.RandomState(0)
data = rng.rand(32, 8, 8, 1).astype(np.float32)
labels = (data.mean(axis=(1, 2, 3)) > 0.5).astype(np.int64)
with tf.Graph().as_default() as graph:
    images = tf.placeholder(tf.float32, [32, 8, 8, 1])
    loss = tf.losses.sparse_softmax_cross_entropy(labels, net(images, True))
    tf.contrib.quantize.create_training_graph(quant_delay=5)
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    train_quants = sorted(op.name for op in graph.get_operations() if op.type == "FakeQuantWithMinMaxVars")
    pattern = graph_matcher.OpTypePattern("FakeQuantWithMinMaxVars")
    matched = len(list(graph_matcher.GraphMatcher(pattern).match_graph(graph)))
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        losses = [session.run([loss, train], {images: data})[0] for _ in range(60)]
        learned = session.run("conv2/act_quant/max:0")
        tf.train.Saver().save(session, "./model.ckpt")
with tf.Graph().as_default() as graph:
    images = tf.placeholder(tf.float32, [32, 8, 8, 1])
    logits = net(images, False)
    tf.contrib.quantize.create_eval_graph()
    act = graph.get_operation_by_name("conv2/act_quant/FakeQuantWithMinMaxVars")
    with tf.Session() as session:
        tf.train.Saver().restore(session, "./model.ckpt")
        used_min, used_max, float_in, quantized = session.run(
            [act.inputs[1], act.inputs[2], act.inputs[0], act.outputs[0]], {images: data})
        session.run(logits, {images: data})
step = (used_max - used_min) / 255  # 8 bits: 256 levels, one step apart


def off_grid(values):  # the largest distance of a value from the grid of steps the smallest value is on
    steps = (values - values.min()) / step
    return float(np.abs(steps - np.round(steps)).max())


print("RESULT " + json.dumps({
    "train_quants": train_quants, "matched": matched, "first": float(losses[0]), "last": float(losses[-1]),
    "learned": float(learned), "used_max": float(used_max), "quantized_levels": len(np.unique(quantized)),
    "quantized_off_grid": off_grid(quantized), "float_off_grid": off_grid(float_in),
}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_slim_conv_net_trains_quantized_and_its_eval_graph_uses_the_learned_ranges(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, SCRIPT, timeout=280)
    assert found["train_quants"] == [
        f"{layer}/{kind}_quant/FakeQuantWithMinMaxVars"
        for layer in ("conv1", "conv2", "logits")
        for kind in ("act", "weights")
    ]
    assert found["matched"] == 6
    assert found["last"] < found["first"]
    assert found["used_max"] == pytest.approx(found["learned"])
    # the activations are put on a grid of at most 256 levels; the float values were not on it (how many distinct
    # float values there are depends on the kernels, e.g. oneDNN on or off)
    assert found["quantized_levels"] <= 256 and found["quantized_off_grid"] < 1e-3 and found["float_off_grid"] > 0.01


def test_freeze_bn_delay_stops_the_moving_statistics_after_that_step():
    data = RNG.randn(4, 6, 6, 2).astype(np.float32)
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [4, 6, 6, 2])
        consumer = tf.identity(bn_net(images, True))
        quantize.experimental_create_training_graph(freeze_bn_delay=2)
        updates = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
        moving_mean = graph.get_tensor_by_name("net/bn/moving_mean:0")
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            means = []
            for _ in range(4):
                session.run([consumer, updates], {images: data})
                means.append(session.run(moving_mean))
    assert not np.allclose(means[0], 0)  # step 1: updated
    np.testing.assert_array_equal(means[1], means[2])  # step 2 on: frozen
    np.testing.assert_array_equal(means[2], means[3])


@pytest.mark.parametrize("training", [True, False])
def test_tf_slim_s_batch_norm_of_separate_ops_is_folded_with_the_same_output(training):
    data = RNG.randn(4, 6, 6, 2).astype(np.float32)
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [4, 6, 6, 2])
        params = {"is_training": training, "fused": False, "scale": True}
        net = slim.conv2d(images, 4, [3, 3], normalizer_fn=slim.batch_norm, normalizer_params=params, scope="conv")
        consumer = tf.identity(net)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            for name, value in (("beta", 0.3), ("gamma", 1.5), ("moving_mean", 0.2), ("moving_variance", 2.0)):
                session.run(v1.assign(graph.get_tensor_by_name(f"conv/BatchNorm/{name}:0"), np.full([4], value)))
            expected = session.run(consumer, {images: data})
            rewrite = (
                quantize.experimental_create_training_graph if training else quantize.experimental_create_eval_graph
            )
            rewrite(quant_delay=1000)
            session.run(v1.variables_initializer([v for v in v1.global_variables() if "quant" in v.op.name]))
            folded = session.run(consumer, {images: data})
    assert (
        graph.get_operation_by_name("conv/weights_quant/FakeQuantWithMinMaxVars").inputs[0].op.name == "conv/mul_fold"
    )
    assert graph.get_operation_by_name("conv/Conv2D_Fold").type == "Conv2D"
    assert ("conv/post_conv_mul" in {op.name for op in graph.get_operations()}) == training
    np.testing.assert_allclose(folded, expected, rtol=1e-4, atol=1e-4)


def test_another_batch_norm_built_from_separate_ops_is_not_folded_and_says_so(npu_log):
    with graph_of_ref_variables() as graph:
        images = v1.placeholder(tf.float32, [4, 6, 6, 2])
        with v1.variable_scope("net"):
            h = v1.layers.conv2d(images, 4, 3, use_bias=False, name="conv")
            tf.nn.relu(v1.layers.batch_normalization(h, training=True, fused=False, name="BatchNorm"))
        quantize.create_training_graph()
        assert fake_quants(graph) == {}
    assert any(
        "net/BatchNorm is a batch norm built from separate ops that is not tf_slim's: it is not folded and its "
        "layer net/conv/Conv2D is not quantized" in message
        for message in npu_log
    ), npu_log
