"""The gpu branch of the mixed precision modes (``mixed_convert``: the region really retyped to fp16 / bf16),
tested on a machine without a GPU, next to the cpu branch (the region emulated by rounding).

The session config is the one the session bridge builds (``bridge_config``: options validated, setup steps run,
pass plan written into the NpuOptimizer entry) for a process that sees one GPU. The only seam is
``tf.config.list_physical_devices``, which is all the backend decision reads (``device_target`` auto -> gpu in
``npu_bridge.core.device.device_target``, the GPU check in ``npu_bridge.core.device.backend``); the precision
step then sets ``mixed_convert`` from the backend as it does for a real GPU. Grappler's meta optimizer then runs
that config on a model placed on ``/device:GPU:0`` (``tf_optimizer.OptimizeGraph``) with a virtual cluster that
declares the GPU: it runs every optimizer of the config, NpuOptimizer included, without executing anything. The
pass retypes an op only where its device has a kernel for the reduced dtype; TensorFlow's GPU kernels are
registered in its CUDA build even on a machine without a GPU (a CPU-only build skips the gpu test). Real GPU
kernels' numerics and the GPU runtime are not tested here.
"""

import pytest
import tensorflow as tf
from helpers.precision import CPU_DEVICE, GPU_DEVICE, grappler_optimized

from npu_bridge.core.plan import pass_contract
from npu_bridge.core.session import bridge, config_proto

v1 = tf.compat.v1
FLOAT = tf.float32.as_datatype_enum
LOW_PRECISION = (tf.float16.as_datatype_enum, tf.bfloat16.as_datatype_enum)
MODES = [("allow_mix_precision", tf.float16), ("allow_mix_precision_bf16", tf.bfloat16)]
MODE_IDS = ["fp16", "bf16"]


def session_plan(monkeypatch, mode, gpu):
    """The ``SessionPlan`` the session bridge makes for ``precision_mode=mode`` in a process that sees one GPU
    (``gpu``) or none; ``device_target`` is left unset (auto), as in a user's script."""
    physical = tf.config.list_physical_devices

    def list_physical_devices(device_type=None):
        if device_type == "GPU":
            return [tf.config.PhysicalDevice(name="/physical_device:GPU:0", device_type="GPU")] if gpu else []
        return physical(device_type)

    monkeypatch.setattr(tf.config, "list_physical_devices", list_physical_devices)
    config = v1.ConfigProto()
    config_proto.append_npu_optimizer(config, {"precision_mode": mode})
    return bridge.bridge_config("", config)


def model(device):
    """A Conv2D + BiasAdd + Relu -> MatMul + BiasAdd -> softmax cross-entropy model with its SGD step on
    ``device``; returns (graph, train op)."""
    graph = tf.Graph()
    with graph.as_default(), tf.device(device):
        images = v1.placeholder(tf.float32, [8, 6, 6, 3], name="images")
        labels = v1.placeholder(tf.float32, [8, 4], name="labels")
        kernel = v1.get_variable("kernel", [3, 3, 3, 5])
        conv = tf.nn.conv2d(images, kernel, 1, "SAME", name="conv")
        hidden = tf.nn.relu(tf.nn.bias_add(conv, v1.get_variable("conv_b", [5]), name="conv_bias"), name="relu")
        dense = tf.matmul(tf.reshape(hidden, [8, 180], name="flat"), v1.get_variable("w", [180, 4]), name="dense")
        logits = tf.nn.bias_add(dense, v1.get_variable("b", [4]), name="logits")
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits), name="loss")
        train = v1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
    return graph, train


def optimized(plan, gpu):
    """The GraphDef Grappler makes of ``model`` with the session config of ``plan``, on a virtual cluster with a
    GPU (the model on it) or without one (the model on the CPU); also checks that it imports, i.e. that the
    dtypes of every edge agree (a retyped op without its border casts fails there)."""
    graph, train = model("/device:GPU:0" if gpu else "/device:CPU:0")
    meta = v1.train.export_meta_graph(graph=graph)
    meta.collection_def["train_op"].node_list.value.append(train.name)
    devices = [CPU_DEVICE, GPU_DEVICE] if gpu else [CPU_DEVICE]
    graph_def = grappler_optimized(plan.config, meta, devices, b"mixed")
    with tf.Graph().as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    return {node.name: node for node in graph_def.node}


def source(nodes, node, position):
    """The node that ``node``'s input ``position`` reads."""
    return nodes[node.input[position].split(":")[0]]


def is_cast(node, src, dst, of):
    """True when ``node`` is a Cast from ``src`` to ``dst`` (DataType enums) of the node named ``of``."""
    return (
        node.op == "Cast"
        and (node.attr["SrcT"].type, node.attr["DstT"].type) == (src, dst)
        and node.input[0].split(":")[0] == of
    )


def low_precision_attrs(node):
    """The names of ``node``'s type attributes that hold float16 or bfloat16."""
    return [
        name
        for name, value in node.attr.items()
        if value.type in LOW_PRECISION or any(t in LOW_PRECISION for t in value.list.type)
    ]


@pytest.mark.skipif(not tf.test.is_built_with_cuda(), reason="no GPU kernels in this TensorFlow build")
@pytest.mark.parametrize("mode, dtype", MODES, ids=MODE_IDS)
def test_a_declared_gpu_retypes_the_mixed_region_with_casts_at_its_borders(monkeypatch, mode, dtype):
    plan = session_plan(monkeypatch, mode, gpu=True)
    assert plan.backend == "gpu"
    written = pass_contract.read(plan.config.graph_options.rewrite_options.custom_optimizers[0])
    assert written["_npu_precision_mixed_convert"] is True
    assert written["_npu_precision_mixed_dtype"] == dtype.name
    low = dtype.as_datatype_enum
    nodes = optimized(plan, gpu=True)

    white = [n for n in nodes.values() if n.op in plan.pass_plan.mixed_white]
    assert sorted(n.op for n in white) == ["Conv2D", "Conv2DBackpropFilter", "MatMul", "MatMul", "MatMul"]
    for node in white:
        assert node.device.endswith("GPU:0") and node.attr["T"].type == low, node
    for gray in ("conv_bias", "relu", "logits", "gradients/relu_grad/ReluGrad", "gradients/conv_bias_grad/BiasAddGrad"):
        assert nodes[gray].attr["T"].type == low, nodes[gray]  # they follow the cube ops
    loss = nodes["softmax_cross_entropy_with_logits"]  # black list
    assert loss.attr["T"].type == FLOAT
    for update in ("update_kernel", "update_conv_b", "update_w", "update_b"):  # variables keep float32
        assert nodes[f"train/{update}/ResourceApplyGradientDescent"].attr["T"].type == FLOAT

    # Casts where the region meets float32: variable reads going in, the logits into the loss, gradients out
    # (not the images: Grappler's layout optimizer puts transposes to NCHW around the GPU's Conv2D).
    assert is_cast(source(nodes, nodes["dense"], 1), FLOAT, low, "dense/ReadVariableOp")
    assert is_cast(source(nodes, nodes["conv"], 1), FLOAT, low, "conv/ReadVariableOp")
    assert is_cast(source(nodes, loss, 0), low, FLOAT, "logits")
    update_kernel = nodes["train/update_kernel/ResourceApplyGradientDescent"]
    assert is_cast(source(nodes, update_kernel, 2), low, FLOAT, "gradients/conv_grad/Conv2DBackpropFilter")
    assert not [n.name for n in nodes.values() if n.op == "NpuRound"]  # no emulation on the GPU


@pytest.mark.parametrize("mode, dtype", MODES, ids=MODE_IDS)
def test_without_a_gpu_the_region_keeps_float32_and_is_rounded(monkeypatch, mode, dtype):
    plan = session_plan(monkeypatch, mode, gpu=False)
    assert plan.backend == "cpu"
    written = pass_contract.read(plan.config.graph_options.rewrite_options.custom_optimizers[0])
    assert written["_npu_precision_mixed_convert"] is False
    assert written["_npu_precision_mixed_dtype"] == dtype.name
    nodes = optimized(plan, gpu=False)

    retyped = {n.name: low_precision_attrs(n) for n in nodes.values() if n.op != "NpuRound"}
    assert not {name: attrs for name, attrs in retyped.items() if attrs}
    assert not [n.name for n in nodes.values() if n.op == "Cast"]
    white = [n for n in nodes.values() if n.op in plan.pass_plan.mixed_white]
    assert len(white) == 5 and all(n.attr["T"].type == FLOAT for n in white)

    def rounds(node, of):
        return node.op == "NpuRound" and node.attr["to"].type == dtype.as_datatype_enum and node.input[0] == of

    # The same borders hold NpuRound ops: float32 values rounded through fp16 / bf16.
    assert rounds(source(nodes, nodes["dense"], 1), "dense/ReadVariableOp")
    assert rounds(source(nodes, nodes["conv"], 1), "conv/ReadVariableOp")
    assert rounds(source(nodes, nodes["softmax_cross_entropy_with_logits"], 0), "logits")
