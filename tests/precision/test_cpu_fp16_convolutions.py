"""A model a script runs in fp16 (official ResNet's ``--dtype=fp16``, hand-written casts, Keras' mixed_float16
policy under npu_device) trains on the CPU at float32 speed: the convolution gradients and Conv3D, whose CPU fp16
kernels are slow, compute in float32 on the fp16 values and give fp16 results rounded once (the NpuOptimizer pass
``cpu_fp16_convolution``), with the values a float64 reference gives rounded to fp16 and the weights TensorFlow's own
fp16 kernels train. A convolution placed on a GPU keeps TensorFlow's fp16 kernel.
"""

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.precision import CPU_DEVICE, GPU_DEVICE, executed_nodes, grappler_optimized
from helpers.tf2 import run_script

from npu_bridge.core.session import bridge, config_proto

v1 = tf.compat.v1
HALF, FLOAT = tf.float16.as_datatype_enum, tf.float32.as_datatype_enum
RNG = np.random.RandomState(7)
IMAGES = RNG.uniform(-1, 1, (2, 6, 6, 3)).astype(np.float16)
KERNEL = RNG.uniform(-1, 1, (3, 3, 3, 4)).astype(np.float32)
DEPTHWISE = RNG.uniform(-1, 1, (3, 3, 4, 1)).astype(np.float32)
VOLUME = RNG.uniform(-1, 1, (1, 4, 4, 4, 2)).astype(np.float16)
KERNEL_3D = RNG.uniform(-1, 1, (2, 2, 2, 2, 3)).astype(np.float32)


def fp16_model(scale=1.0):
    """Conv2D -> depthwise conv and Conv3D, all in fp16 on fp32 variables (cast as fp16 scripts do), with the
    gradients of a float32 loss times ``scale``; returns (graph, init, fetches, feed)."""
    graph = tf.Graph()
    with graph.as_default():
        kernel = v1.get_variable("kernel", initializer=KERNEL)
        depthwise = v1.get_variable("depthwise", initializer=DEPTHWISE)
        kernel_3d = v1.get_variable("kernel_3d", initializer=KERNEL_3D)
        images = v1.placeholder(tf.float16, IMAGES.shape, name="images")
        volume = v1.placeholder(tf.float16, VOLUME.shape, name="volume")
        conv = tf.nn.conv2d(images, tf.cast(kernel, tf.float16), 1, "SAME", name="conv")
        spread = tf.nn.depthwise_conv2d(conv, tf.cast(depthwise, tf.float16), [1, 1, 1, 1], "SAME", name="spread")
        conv_3d = tf.nn.conv3d(volume, tf.cast(kernel_3d, tf.float16), [1] * 5, "SAME", name="conv_3d")
        loss = tf.reduce_sum(tf.square(tf.cast(spread, tf.float32))) + tf.reduce_sum(tf.cast(conv_3d, tf.float32))
        loss *= scale
        grads = tf.gradients(loss, [kernel, depthwise, kernel_3d, images])
        init = v1.global_variables_initializer()
    fetches = {"conv": conv, "spread": spread, "conv_3d": conv_3d, "grads": grads}
    return graph, init, fetches, {images: IMAGES, volume: VOLUME}


def conv2d_reference(x, w):
    """SAME, stride 1, NHWC / HWIO, in float64."""
    kh, kw = w.shape[:2]
    padded = np.pad(x.astype(np.float64), ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    out = np.zeros(x.shape[:3] + (w.shape[3],))
    for i in range(kh):
        for j in range(kw):
            out += padded[:, i : i + x.shape[1], j : j + x.shape[2], :] @ w[i, j].astype(np.float64)
    return out


def fp16_close(actual, reference):
    """Within one fp16 rounding of the float64 reference (relative to the largest value)."""
    scale = np.max(np.abs(reference))
    return np.max(np.abs(actual.astype(np.float64) - reference)) <= scale * 2**-10


@pytest.mark.op_types
def test_fp16_convolution_gradients_and_conv3d_compute_in_float32_on_the_cpu_with_fp16_results():
    graph, init, fetches, feed = fp16_model()
    run_metadata = v1.RunMetadata()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        sess.run(init)
        values = sess.run(fetches, feed, options=v1.RunOptions(output_partition_graphs=True), run_metadata=run_metadata)
    executed = executed_nodes(run_metadata)
    by_name = {node.name: node for node in executed}
    convolutions = [node for node in executed if "Conv" in node.op]
    assert {node.op for node in convolutions} >= {
        "Conv2D",
        "Conv2DBackpropFilter",
        "DepthwiseConv2dNative",
        "DepthwiseConv2dNativeBackpropInput",
        "DepthwiseConv2dNativeBackpropFilter",
        "Conv3D",
        "Conv3DBackpropFilterV2",
    }
    for node in convolutions:
        # the 2D forward convolutions keep TensorFlow's fp16 kernels, which are not slow
        expected = HALF if node.op in ("Conv2D", "DepthwiseConv2dNative") else FLOAT
        assert node.attr["T"].type == expected, node
        for name in node.input if expected == FLOAT else ():
            source = by_name.get(name.split(":")[0])
            if source is not None and source.op == "Cast":
                assert (source.attr["SrcT"].type, source.attr["DstT"].type) == (HALF, FLOAT), source

    # the script still gets fp16 values; the rewritten ones are float32 sums rounded to fp16 once
    for name in ("conv", "spread", "conv_3d"):
        assert values[name].dtype == np.float16
    reference_conv = conv2d_reference(IMAGES, KERNEL.astype(np.float16))
    assert fp16_close(values["conv"], reference_conv)
    kernel_grad = values["grads"][0]
    assert kernel_grad.dtype == np.float32 and np.all(np.isfinite(kernel_grad))
    # d loss / d kernel of the Conv3D term: every output position sums its inputs, so the gradient of a tap is the
    # sum of the inputs that tap meets, exactly representable here
    volume_grad = values["grads"][2]
    padded = np.pad(VOLUME.astype(np.float64), ((0, 0), (0, 1), (0, 1), (0, 1), (0, 0)))
    for a in range(2):
        for b in range(2):
            for c in range(2):
                taps = padded[:, a : a + 4, b : b + 4, c : c + 4, :].sum(axis=(0, 1, 2, 3))
                assert np.allclose(volume_grad[a, b, c], taps[:, None], rtol=2**-10, atol=2**-10)


@pytest.mark.op_types
def test_training_an_fp16_conv_net_gives_the_values_of_tensorflows_own_fp16_kernels():
    def train(config):
        graph, init, fetches, feed = fp16_model(scale=2**-8)
        with graph.as_default():
            variables = v1.trainable_variables()
            step = v1.train.GradientDescentOptimizer(0.01).apply_gradients(zip(fetches["grads"][:3], variables))
        with v1.Session(graph=graph, config=config) as sess:
            sess.run(init)
            for _ in range(3):
                sess.run(step, feed)
            return sess.run(variables)

    ours, tensorflows = train(npu_config()), train(v1.ConfigProto())
    for mine, theirs, start in zip(ours, tensorflows, (KERNEL, DEPTHWISE, KERNEL_3D)):
        assert np.all(np.isfinite(mine)) and not np.allclose(mine, start)  # it trained
        assert np.allclose(mine, theirs, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("placement, stays_fp16", [("/device:CPU:0", False), ("/device:GPU:0", True)])
def test_a_convolution_gradient_tensorflow_may_place_on_a_gpu_keeps_its_fp16_kernel(placement, stays_fp16):
    graph = tf.Graph()
    with graph.as_default(), tf.device(placement):
        images = v1.placeholder(tf.float16, IMAGES.shape, name="images")
        output_gradient = v1.placeholder(tf.float16, IMAGES.shape[:3] + KERNEL.shape[3:], name="output_gradient")
        conv = v1.nn.conv2d_backprop_filter(images, KERNEL.shape, output_gradient, [1, 1, 1, 1], "SAME", name="conv")
        v1.add_to_collection("train_op", tf.identity(conv, name="out"))
    meta = v1.train.export_meta_graph(graph=graph)
    config = v1.ConfigProto()
    config_proto.append_npu_optimizer(config, {})
    # a cluster with a GPU: placed on the CPU it is rewritten; on the GPU it keeps TensorFlow's kernel (one placed
    # nowhere is rewritten when neither the session nor this process has a GPU, as in the tests above)
    graph_def = grappler_optimized(bridge.bridge_config("", config).config, meta, [CPU_DEVICE, GPU_DEVICE], b"fp16")
    nodes = {node.name: node for node in graph_def.node}
    assert nodes["conv"].attr["T"].type == (HALF if stays_fp16 else FLOAT)
    assert nodes["out"].attr["T"].type == HALF


@pytest.mark.op_types
def test_a_keras_mixed_float16_conv_net_fits_under_npu_device_with_float32_convolutions(tmp_path):
    ours, _ = run_script("keras_mixed_float16_convnet.py", tmp_path, "npu")
    theirs, _ = run_script("keras_mixed_float16_convnet.py", tmp_path, "plain")
    assert ours["compute_dtype"] == "float16"  # the policy is the script's: its layers still compute in fp16
    gradients = {op: dtype for op, dtype in ours["computed"] if "Backprop" in op}
    assert set(gradients) >= {"Conv2DBackpropFilter", "Conv2DBackpropInput", "DepthwiseConv2dNativeBackpropFilter"}
    assert set(gradients.values()) == {"float32"}, ours["computed"]
    assert {dtype for op, dtype in theirs["computed"] if "Backprop" in op} == {"float16"}, theirs["computed"]
    for mine, tensorflows in zip(ours["weights"], theirs["weights"]):
        assert np.allclose(mine, tensorflows, rtol=1e-2, atol=1e-3)
