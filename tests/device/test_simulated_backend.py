"""The simulated Ascend backend: device_target, fp16 saturation vs INF/NaN mode, implementation modes."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.precision import bf16, fp16, run_executed

from npu_bridge.core.device import device_mode, device_target
from npu_bridge.core.precision import float_status
from npu_bridge.core.runtime import native_library
from npu_bridge.core.runtime.errors import NpuOptionError
from npu_bridge.estimator import npu_aicore_ops
from npu_bridge.estimator.npu import npu_plugin

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def _default_overflow_mode():
    device_mode.reset()
    yield
    device_mode.reset()


def graph_with_status(dtype, build):
    """A placeholder of ``dtype``, the values ``build(x)`` makes after the float-status register is cleared, and the
    register read after them: (graph, x, *values, status)."""
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(dtype, [None])
        clear = float_status.npu_clear_float_status_v2()
        with tf.control_dependencies([clear]):
            values = build(x)
        with tf.control_dependencies(values):
            status = float_status.npu_get_float_status_v2()
    return (graph, x, *values, status)


def overflow_graph():
    """float32 -> float16 cast, a float16 product, and the float-status register read after them."""

    def build(x):
        half = tf.cast(x, tf.float16)
        return [half, half * tf.constant(2.0, tf.float16)]

    return graph_with_status(tf.float32, build)


def test_saturation_mode_is_the_simulated_backends_default():
    graph, x, half, doubled, status = overflow_graph()
    (half_value, doubled_value, flags), executed = run_executed(
        graph, [half, doubled, status], {x: [1e5, 40000.0]}, device_target="ascend"
    )
    assert half_value.tolist() == [65504.0, 40000.0]
    assert doubled_value.tolist() == [65504.0, 65504.0]
    assert flags[0] == 1  # saturation is an overflow for the float-status register
    assert [n.op for n in executed].count("NpuSaturateFp16") == 2  # after the cast and after the product


def nan_graph():
    """float16 results that cannot be computed (0 / 0, the root of -1), and the float-status register after them."""
    return graph_with_status(tf.float16, lambda x: [x / x, tf.sqrt(-x)])


def test_saturation_mode_gives_0_for_a_nan_result_as_ascend_does():
    graph, x, quotient, root, status = nan_graph()
    (quotient_value, root_value, flags), _ = run_executed(
        graph, [quotient, root, status], {x: [0.0, 4.0, 1.0]}, device_target="ascend"
    )
    assert quotient_value.tolist() == [0.0, 1.0, 1.0] and root_value.tolist() == [0.0, 0.0, 0.0]
    assert flags[0] == 1  # a NaN result still sets the float-status register
    npu_plugin.set_device_sat_mode(1)
    (quotient_value, root_value), _ = run_executed(
        graph, [quotient, root], {x: [0.0, 4.0, 1.0]}, device_target="ascend"
    )
    assert np.isnan(quotient_value[0]) and np.isnan(root_value[1:]).all()  # INF/NaN mode: IEEE


def test_inf_nan_mode_overflows_to_inf():
    npu_plugin.set_device_sat_mode(1)
    graph, x, half, doubled, status = overflow_graph()
    (half_value, doubled_value, flags), _ = run_executed(
        graph, [half, doubled, status], {x: [1e5, 40000.0]}, device_target="ascend"
    )
    assert half_value.tolist() == [np.inf, 40000.0]
    assert doubled_value.tolist() == [np.inf, np.inf]
    assert flags[0] == 1


def test_cpu_backend_computes_with_ieee_behaviour():
    graph, x, half, doubled, _ = overflow_graph()
    (half_value, doubled_value), executed = run_executed(graph, [half, doubled], {x: [1e5, 1.0]}, device_target="cpu")
    assert half_value.tolist() == [np.inf, 1.0] and doubled_value.tolist() == [np.inf, 2.0]
    assert "NpuSaturateFp16" not in [n.op for n in executed]


def test_backend_from_the_environment_variable(monkeypatch):
    monkeypatch.setenv(device_target.ENV_VARIABLE, "ascend")
    graph, x, half, _, _ = overflow_graph()
    value, _ = run_executed(graph, half, {x: [1e6, 1.0]})
    assert value.tolist() == [65504.0, 1.0]
    assert not npu_plugin.is_inf_nan_enabled()


def test_is_inf_nan_enabled_follows_backend_and_mode(monkeypatch):
    assert npu_plugin.is_inf_nan_enabled()  # cpu
    monkeypatch.setenv(device_target.ENV_VARIABLE, "ascend")
    assert not npu_plugin.is_inf_nan_enabled()
    npu_plugin.set_device_sat_mode(1)
    assert npu_plugin.is_inf_nan_enabled()
    npu_plugin.set_device_sat_mode(0)
    assert not npu_plugin.is_inf_nan_enabled()
    for bad in (2, -1, "0", True):
        with pytest.raises(ValueError, match="mode must be 0 .saturation. or 1 .INF/NaN."):
            npu_plugin.set_device_sat_mode(bad)


def test_backend_is_fixed_by_the_first_initialization():
    graph, x, half, _, _ = overflow_graph()
    run_executed(graph, half, {x: [1.0, 1.0]}, device_target="ascend")
    assert device_target.process_target() == "ascend"


# Rows from 0.01 to 5 in magnitude, so float16 sums of squares stay far from overflow.
LN_X = (np.random.RandomState(5).randn(16, 64) * np.logspace(-2, 0.7, 16)[:, None]).astype(np.float16)


def add_layer_norm(name="LayerNorm"):
    """LayerNorm of a fed LN_X (constant inputs would be folded away before any rewrite); returns (outputs, feed)."""
    x = v1.placeholder(tf.float16, LN_X.shape)
    return npu_aicore_ops.layer_norm(x, tf.ones([64], tf.float16), tf.zeros([64], tf.float16), 1, 1, 1e-5, name=name), {
        x: LN_X
    }


def layer_norm_graph(names=("LayerNorm",)):
    graph = tf.Graph()
    feed = {}
    outputs = []
    with graph.as_default():
        for name in names:
            output, fed = add_layer_norm(name)
            outputs.append(output)
            feed.update(fed)
    return graph, outputs, feed


def ideal_layer_norm(mean, variance):
    """LayerNorm of LN_X with the op's mean and variance, the rest in float64."""
    return (LN_X.astype(np.float64) - mean) / np.sqrt(variance.astype(np.float64) + 1e-5)


def reference_layer_norm(mean, variance, high_performance):
    """LayerNorm of LN_X in fp16 arithmetic, from the op's own mean and variance outputs."""
    centered = (LN_X - mean).astype(np.float16)
    shifted = (variance + np.float16(1e-5)).astype(np.float16)
    if high_performance:
        rstd = np.exp((np.log(shifted).astype(np.float16) * np.float16(-0.5)).astype(np.float16)).astype(np.float16)
    else:
        rstd = (1.0 / np.sqrt(shifted.astype(np.float32))).astype(np.float16)
    return (centered * rstd).astype(np.float16)


@pytest.mark.parametrize(
    "options, high_performance",
    [
        ({"device_target": "ascend"}, True),  # Ascend's default implementation mode
        ({"device_target": "ascend", "op_select_implmode": "high_precision"}, False),
        ({"device_target": "ascend", "op_select_implmode": "high_performance_for_all"}, True),
        ({"device_target": "cpu", "op_select_implmode": "high_performance"}, False),  # reported, no effect off Ascend
    ],
)
def test_layer_norm_implementation_modes(options, high_performance):
    graph, [(y, mean, variance)], feed = layer_norm_graph()
    (y, mean, variance), executed = run_executed(graph, [y, mean, variance], feed, **options)
    expected = reference_layer_norm(mean, variance, high_performance)
    np.testing.assert_allclose(y.astype(np.float32), expected.astype(np.float32), rtol=2e-3, atol=2e-3)
    ideal = ideal_layer_norm(mean, variance)
    error = np.abs(y - ideal).mean()
    other_error = np.abs(reference_layer_norm(mean, variance, not high_performance) - ideal).mean()
    assert (error > 1.2 * other_error) if high_performance else (other_error > 1.2 * error)
    assert ("Exp" in [n.op for n in executed]) == high_performance


LOGITS = np.array([[12.0, 0.0, 0.0, 0.0], [1.0, 2.0, 0.5, 0.0]], np.float16)
LABELS = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]], np.float16)


def cross_entropy_graph():
    """The float16 op (tf.nn.softmax_cross_entropy_with_logits computes float16 inputs in float32)."""
    graph = tf.Graph()
    with graph.as_default():
        logits = v1.placeholder(tf.float16, LOGITS.shape)
        labels = v1.placeholder(tf.float16, LABELS.shape)
        loss = tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=logits, labels=labels)[0]
    return graph, loss, {logits: LOGITS, labels: LABELS}


EXPECTED_XENT = [np.log1p(3 * np.exp(-12.0)), -2.0 + np.log(np.exp([1.0, 2.0, 0.5, 0.0]).sum())]


def test_high_precision_cross_entropy_subtracts_the_max():
    graph, loss, feed = cross_entropy_graph()
    value, _ = run_executed(graph, loss, feed, device_target="ascend", op_select_implmode="high_precision")
    np.testing.assert_allclose(value.astype(np.float32), EXPECTED_XENT, atol=2e-3)


def test_high_performance_cross_entropy_overflows_fp16_for_large_logits():
    graph, loss, feed = cross_entropy_graph()
    saturated, _ = run_executed(graph, loss, feed, device_target="ascend")  # default: high_performance, saturation
    assert saturated[0] == pytest.approx(np.log(65504.0) - 12.0, abs=0.01)  # exp(12) saturated to 65504
    np.testing.assert_allclose(saturated[1].astype(np.float32), EXPECTED_XENT[1], atol=5e-3)
    npu_plugin.set_device_sat_mode(1)
    infinite, _ = run_executed(graph, loss, feed, device_target="ascend")
    assert not np.isfinite(infinite[0])


def test_optypelist_limits_the_implementation_mode_to_its_op_types():
    graph, loss, feed = cross_entropy_graph()
    with graph.as_default():
        (y, _, _), layer_norm_feed = add_layer_norm()
    (loss_value, _), executed = run_executed(
        graph,
        [loss, y],
        {**feed, **layer_norm_feed},
        device_target="ascend",
        op_select_implmode="high_precision",
        optypelist_for_implmode="SoftmaxCrossEntropyWithLogits",
    )
    np.testing.assert_allclose(loss_value.astype(np.float32), EXPECTED_XENT, atol=2e-3)
    assert "Exp" in [n.op for n in executed]  # LayerNorm keeps the default high_performance


def test_op_precision_mode_file_by_node_name(tmp_path):
    ini = tmp_path / "op_precision.ini"
    ini.write_text("[ByOpType]\nLayerNorm=high_performance\n[ByNodeName]\nprecise=high_precision\n")
    graph, [(precise, mean, variance), (fast, _, _)], feed = layer_norm_graph(("precise", "fast"))
    (precise_value, fast_value, mean, variance), _ = run_executed(
        graph,
        [precise, fast, mean, variance],
        feed,
        device_target="ascend",
        op_select_implmode="high_precision",
        op_precision_mode=str(ini),
    )
    ideal = ideal_layer_norm(mean, variance)
    assert np.abs(fast_value - ideal).mean() > 1.2 * np.abs(precise_value - ideal).mean()


@pytest.mark.parametrize(
    "content, error",
    [
        ("[ByOpType]\nLayerNorm=fastest\n", "LayerNorm=fastest: the value must be one of"),
        ("[ByDevice]\nx=high_precision\n", r"unknown section \[ByDevice\]"),
        ("LayerNorm=high_precision\n", "not a valid .ini file"),
    ],
)
def test_bad_op_precision_mode_file(tmp_path, content, error):
    ini = tmp_path / "op_precision.ini"
    ini.write_text(content)
    with pytest.raises(NpuOptionError, match=f"op_precision_mode.*{error}"):
        v1.Session(config=npu_config(op_precision_mode=str(ini)))


def test_npu_round_is_a_cast_pair_in_one_op():
    ops = native_library.ops()
    specials = [1.0001, -3.14159, 65519.0, 65520.0, 1e-8, -1e30, np.inf, np.nan, 1.00390625, -(2.0**-24) * 1.5]
    values = np.array(specials * 2, np.float32)  # the vector loop takes 8 values at a time, the scalar one the rest
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [None])
        half, bfloat = ops.npu_round(x, to=tf.float16), ops.npu_round(x, to=tf.bfloat16)
        saturated = ops.npu_round(x, to=tf.float16, saturate=True)
    with v1.Session(graph=graph) as sess:
        got_half, got_bf16 = sess.run([half, bfloat], {x: values})
        np.testing.assert_array_equal(got_half, fp16(values))
        np.testing.assert_array_equal(got_bf16, bf16(values))
        npu_plugin.set_device_sat_mode(1)  # INF/NaN mode: saturate does nothing
        np.testing.assert_array_equal(sess.run(saturated, {x: values}), fp16(values))
        device_mode.reset()  # the simulated backend's default: saturation
        want = np.where(np.isinf(fp16(values)), np.sign(values) * 65504.0, fp16(values))
        want = np.where(np.isnan(values), 0.0, want)  # Ascend's saturation mode has no NaN: it gives 0
        np.testing.assert_array_equal(sess.run(saturated, {x: values}), want)
        big = np.random.RandomState(0).randn(1 << 20).astype(np.float32) * 1e4  # the parallel path
        np.testing.assert_array_equal(sess.run(half, {x: big}), fp16(big))
