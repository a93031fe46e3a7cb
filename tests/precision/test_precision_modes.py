"""precision_mode / precision_mode_v2 on cube ops, keep_dtype, customize_dtypes and the defaults per backend."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.precision import casts_to, executed_nodes, fp16, rounds_through, run_executed, saturating
from tensorflow.core.protobuf import rewriter_config_pb2

from npu_bridge.core.options import parse_config
from npu_bridge.core.options.table import PRECISION_MODES, PRECISION_MODES_V2
from npu_bridge.core.precision import modes
from npu_bridge.core.runtime.errors import NpuOptionError
from npu_bridge.core.session import bridge

v1 = tf.compat.v1
RNG = np.random.RandomState(0)
A = RNG.randn(32, 256).astype(np.float32)
B = RNG.randn(256, 16).astype(np.float32)
FP32 = A @ B
FP16_IN_FP32_ACC = fp16(A) @ fp16(B)


def matmul_graph():
    graph = tf.Graph()
    with graph.as_default():
        a = v1.placeholder(tf.float32, A.shape, name="a")
        b = v1.placeholder(tf.float32, B.shape, name="b")
        product = tf.matmul(a, b, name="product")
    return graph, product, {a: A, b: B}


def run_matmul(**options):
    graph, product, feed = matmul_graph()
    return run_executed(graph, product, feed, **options)


@pytest.mark.parametrize(
    "options",
    [
        {"precision_mode": "cube_fp16in_fp32out"},
        {"precision_mode": "force_fp32"},
        {"precision_mode_v2": "cube_fp16in_fp32out"},
    ],
)
def test_cube_fp16in_fp32out_matmul_is_fp16_inputs_with_fp32_accumulation(options):
    result, executed = run_matmul(**options)
    np.testing.assert_allclose(result, FP16_IN_FP32_ACC, rtol=1e-5, atol=1e-4)
    assert np.abs(result - FP32).max() > 1e-3  # visibly not the float32 product
    assert len(casts_to(executed, tf.float16)) == 2  # both inputs go through fp16; the output stays float32


def test_allow_fp32_to_fp16_also_rounds_the_cube_output_to_fp16():
    result, executed = run_matmul(precision_mode="allow_fp32_to_fp16")
    np.testing.assert_array_equal(fp16(result), result)  # every value is an fp16 value
    ulp = np.spacing(np.abs(FP16_IN_FP32_ACC).astype(np.float16)).astype(np.float32)
    assert np.all(np.abs(result - fp16(FP16_IN_FP32_ACC)) <= ulp)  # fp32 accumulation, rounded once
    assert len(casts_to(executed, tf.float16)) == 3


@pytest.mark.parametrize("options", [{"precision_mode": "force_fp16"}, {"precision_mode_v2": "fp16"}])
def test_force_fp16_rounds_every_computing_op(options):
    graph = tf.Graph()
    with graph.as_default():
        a = v1.placeholder(tf.float32, A.shape)
        total = tf.reduce_sum(tf.nn.relu(tf.matmul(a, tf.constant(B))) * 1.001, axis=1)
    result, executed = run_executed(graph, total, {a: A}, **options)
    np.testing.assert_array_equal(fp16(result), result)
    relu = np.maximum(fp16(FP16_IN_FP32_ACC), 0)
    np.testing.assert_allclose(result, fp16(fp16(relu * fp16(1.001)).sum(axis=1)), rtol=2e-3)
    assert len(casts_to(executed, tf.float16)) >= 4


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"precision_mode": "must_keep_origin_dtype"},
        {"precision_mode_v2": "origin"},
        {"precision_mode": "allow_fp32_to_bf16"},
        {"device_target": "cpu"},
    ],
)
def test_modes_that_keep_the_graph_dtypes(options):
    result, executed = run_matmul(**options)
    np.testing.assert_allclose(result, FP32, rtol=1e-5, atol=1e-4)
    assert not [n for n in executed if n.op in ("Cast", "NpuRound")]


def test_the_simulated_ascend_backend_defaults_to_allow_fp32_to_fp16():
    result, executed = run_matmul(device_target="ascend")
    np.testing.assert_array_equal(fp16(result), result)
    assert len(saturating(executed)) == 3  # the simulated device's fp16 values: two inputs, one output
    policy = modes.policy(parse_config(npu_config(device_target="ascend")), "ascend")
    assert policy.describe().startswith("precision mode allow_fp32_to_fp16 (the simulated Ascend backend's default)")


@pytest.mark.op_types
def test_backprops_of_cube_ops_take_fp16_inputs():
    graph = tf.Graph()
    with graph.as_default():
        images = v1.placeholder(tf.float32, [2, 8, 8, 3])
        kernel = v1.get_variable("kernel", initializer=tf.constant(RNG.randn(3, 3, 3, 4).astype(np.float32)))
        depthwise = v1.get_variable("depthwise", initializer=tf.constant(RNG.randn(3, 3, 4, 1).astype(np.float32)))
        dense = v1.get_variable("dense", initializer=tf.constant(RNG.randn(256, 3).astype(np.float32)))
        hidden = tf.nn.depthwise_conv2d(tf.nn.conv2d(images, kernel, 1, "SAME"), depthwise, [1, 1, 1, 1], "SAME")
        loss = tf.reduce_sum(tf.square(tf.matmul(tf.reshape(hidden, [2, 256]), dense)))
        grads = tf.gradients(loss, [images, kernel, depthwise, dense])
        init = v1.global_variables_initializer()
    with v1.Session(graph=graph, config=npu_config(precision_mode="cube_fp16in_fp32out")) as sess:
        sess.run(init)
        run_metadata = v1.RunMetadata()
        sess.run(
            grads,
            {images: RNG.randn(2, 8, 8, 3)},
            options=v1.RunOptions(output_partition_graphs=True),
            run_metadata=run_metadata,
        )
    executed = {n.name: n for n in executed_nodes(run_metadata)}
    cube = [n for n in executed.values() if n.op in modes.CUBE_OPS]
    assert {n.op for n in cube} >= {
        "Conv2D",
        "Conv2DBackpropInput",
        "Conv2DBackpropFilter",
        "DepthwiseConv2dNative",
        "DepthwiseConv2dNativeBackpropInput",
        "DepthwiseConv2dNativeBackpropFilter",
        "MatMul",
    }
    for node in cube:
        for source in (executed[i.split(":")[0]] for i in node.input if not i.startswith("^")):
            if source.op not in ("Const", "Shape", "ShapeN"):  # constants and int32 sizes
                assert rounds_through(source, tf.float16), (
                    node.name,
                    source.name,
                )


def test_matmul_gradient_is_computed_from_fp16_inputs():
    graph = tf.Graph()
    with graph.as_default():
        a = v1.placeholder(tf.float32, A.shape)
        weights = v1.placeholder(tf.float32, B.shape)
        upstream = v1.placeholder(tf.float32, FP32.shape)
        (grad,) = tf.gradients(tf.matmul(a, weights), [weights], grad_ys=upstream)
    dy = RNG.randn(*FP32.shape).astype(np.float32)
    result, _ = run_executed(graph, grad, {a: A, weights: B, upstream: dy}, precision_mode="cube_fp16in_fp32out")
    np.testing.assert_allclose(result, fp16(A).T @ fp16(dy), rtol=1e-5, atol=1e-4)


def test_ops_with_the_keep_dtype_attribute_keep_float32():
    graph = tf.Graph()
    with graph.as_default():
        a = v1.placeholder(tf.float32, A.shape)
        rounded = tf.matmul(a, tf.constant(B))
        with graph._attr_scope({"_keep_dtype": v1.AttrValue(i=1)}):  # what keep_dtype_scope stamps
            kept = tf.matmul(a, tf.constant(B))
    (rounded_value, kept_value), _ = run_executed(graph, [rounded, kept], {a: A}, precision_mode="allow_fp32_to_fp16")
    np.testing.assert_array_equal(fp16(rounded_value), rounded_value)
    np.testing.assert_allclose(kept_value, FP32, rtol=1e-5, atol=1e-4)


def test_customize_dtypes_by_type_and_by_name(tmp_path):
    config = tmp_path / "dtypes.cfg"
    config.write_text(
        "# keep MatMul in float32, except the op named product\n"
        "OpType::MatMulV2:InputDtype:float32,float32,OutputDtype:float32\n"
        "product::InputDtype:float16,float16,OutputDtype:float32\n"
    )
    graph = tf.Graph()
    with graph.as_default():
        a = v1.placeholder(tf.float32, A.shape)
        product = tf.matmul(a, tf.constant(B), name="product")
        other = tf.matmul(a, tf.constant(B), name="other")
    (product_value, other_value), _ = run_executed(
        graph, [product, other], {a: A}, precision_mode="allow_fp32_to_fp16", customize_dtypes=str(config)
    )
    np.testing.assert_allclose(product_value, FP16_IN_FP32_ACC, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(other_value, FP32, rtol=1e-5, atol=1e-4)


def test_customize_dtypes_is_ignored_when_the_mode_keeps_dtypes(tmp_path):
    config = tmp_path / "dtypes.cfg"
    config.write_text("OpType::MatMul:InputDtype:float16,float16\n")
    result, _ = run_matmul(precision_mode="must_keep_origin_dtype", customize_dtypes=str(config))
    np.testing.assert_allclose(result, FP32, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "content, error",
    [
        (None, "cannot read the file"),
        ("MatMul:float16\n", "line 1: 'MatMul:float16' is not OpName::"),
        ("OpType::MatMul:InputDtype:float8\n", "line 1: unknown dtype 'float8'"),
        ("mm::Dtype:float16\n", "expected InputDtype"),
    ],
)
def test_bad_customize_dtypes_file_fails_at_session_creation(tmp_path, content, error):
    config = tmp_path / "dtypes.cfg"
    if content is not None:
        config.write_text(content)
    with pytest.raises(NpuOptionError, match=f"customize_dtypes.*{error}"):
        v1.Session(config=npu_config(precision_mode="allow_fp32_to_fp16", customize_dtypes=str(config)))


@pytest.mark.parametrize("mode", ["cube_hif8", "mixed_hif8"])
def test_hifloat8_modes_are_rejected_with_the_reason(mode):
    with pytest.raises(NpuOptionError, match=f"precision_mode_v2.*'{mode}'.*Ascend 950"):
        v1.Session(config=npu_config(precision_mode_v2=mode))


def test_every_upstream_mode_has_a_meaning_here():
    for mode in PRECISION_MODES + PRECISION_MODES_V2:
        assert (mode in modes._BEHAVIOUR) != (mode in modes.UNSUPPORTED_MODES), mode


def test_rules_turn_the_remapper_off_and_the_user_graph_stays_unchanged():
    plan = bridge.bridge_config("", npu_config(precision_mode="allow_fp32_to_fp16"))
    assert plan.config.graph_options.rewrite_options.remapping == rewriter_config_pb2.RewriterConfig.OFF
    graph, product, feed = matmul_graph()
    run_executed(graph, product, feed, precision_mode="allow_fp32_to_fp16")
    assert "Cast" not in [n.op for n in graph.as_graph_def().node]
