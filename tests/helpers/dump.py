"""Shared helpers of the dump tests: configs, small graphs, and reading what a session dumped."""

import os

import numpy as np
import tensorflow as tf

from helpers.config import npu_config
from npu_bridge.core import dump
from npu_bridge.core.dump import dump_file, dump_tree
from npu_bridge.npu_init import npu_ops

v1 = tf.compat.v1


def dump_config(path, **options):
    """A bridged-session config that dumps to ``path`` (enable_dump unless given otherwise)."""
    options.setdefault("enable_dump", True)
    return npu_config(dump_path=str(path), **options)


def mlp_graph(seed=0, scale=1.0):
    """A two-layer training graph.

    Returns:
      (graph, x, y, parts): parts holds the tensors matmul/hidden/logits/loss, the ops train/init and the
      variables w1/w2.
    """
    rng = np.random.RandomState(seed)
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [4, 3], name="x")
        y = v1.placeholder(tf.float32, [4, 2], name="y")
        w1 = tf.Variable(rng.normal(size=(3, 5)).astype(np.float32) * scale, name="w1")
        w2 = tf.Variable(rng.normal(size=(5, 2)).astype(np.float32), name="w2")
        matmul = tf.matmul(x, w1, name="layer1/MatMul")
        hidden = tf.nn.tanh(matmul, name="layer1/Tanh")
        logits = tf.matmul(hidden, w2, name="layer2/MatMul")
        loss = tf.reduce_mean(tf.square(logits - y), name="loss")
        train = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = v1.global_variables_initializer()
    return (
        graph,
        x,
        y,
        {
            "hidden": hidden,
            "logits": logits,
            "loss": loss,
            "train": train,
            "init": init,
            "w1": w1,
            "w2": w2,
            "matmul": matmul,
        },
    )


def feed(x, y, step=0):
    """Deterministic inputs for ``mlp_graph``, different in every step."""
    rng = np.random.RandomState(100 + step)
    return {x: rng.uniform(-1, 1, (4, 3)).astype(np.float32), y: rng.uniform(-1, 1, (4, 2)).astype(np.float32)}


def train(config, steps=2, graph_parts=None):
    """Runs ``steps`` training steps of ``mlp_graph()`` (or ``graph_parts``) in a session with ``config``, then
    waits for the dump writer; returns the losses."""
    graph, x, y, parts = graph_parts or mlp_graph()
    losses = []
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        sess.run(parts["init"])
        for step in range(steps):
            losses.append(sess.run([parts["loss"], parts["train"]], feed(x, y, step))[0])
    dump.flush()
    return losses


def artifacts(root, kind="dump"):
    """The artifacts of one kind under ``root`` (after waiting for the writer)."""
    dump.flush()
    return [a for a in dump_tree.scan(root) if a.name.kind == kind]


def device_dirs(root):
    """{device id: path} of the {time}/{device id} directories under a dump_path."""
    found = {}
    for time_dir in os.listdir(root):
        for device in os.listdir(os.path.join(root, time_dir)):
            found[int(device)] = os.path.join(root, time_dir, device)
    return found


def dumped(root, op_name, step=None, model=None):
    """The loaded dump file of ``op_name`` (its first occurrence at ``step`` of ``model``)."""
    candidates = [
        a
        for a in artifacts(root)
        if a.name.op_name == op_name.replace("/", "_")
        and (step is None or a.step == step)
        and (model is None or a.model == model)
    ]
    assert candidates, f"no dump of {op_name} at step {step} under {root}"
    return dump_file.load(min(candidates, key=lambda a: a.name.timestamp).path)


def training_model(root, op_name="layer1/MatMul"):
    """The model directory ("{name}/{id}") whose dumps contain ``op_name`` (the training graph)."""
    return next(a.model for a in artifacts(root) if a.name.op_name == op_name.replace("/", "_"))


def dump_planted_chain(base, device_target, seed, dump_mode="all"):
    """Dumps one run of a chain where one op makes the error and later ops carry it; returns its dump root.

    scale -> shift -> proj/MatMul -> center -> act -> total: on the simulated Ascend backend (``device_target``
    "ascend", allow_fp32_to_fp16) the MatMul takes and gives fp16, the only error made; center subtracts a constant
    close to the MatMul's exact result, so its small output turns the MatMul's relative error of ~4e-4 into a
    cosine similarity far below 0.99. On "cpu" everything is float32 (the ground truth).
    """
    base.mkdir()
    rng = np.random.RandomState(0)
    weights = rng.normal(size=(16, 4)).astype(np.float32)
    values = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    exact = (values.astype(np.float64) * 3 + 1000) @ weights.astype(np.float64)
    near = (exact + rng.normal(size=exact.shape) * 0.5).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(seed)
        x = v1.placeholder(tf.float32, [8, 16], name="x")
        scaled = tf.multiply(x, 3.0, name="scale")
        shifted = tf.add(scaled, 1000.0, name="shift")
        product = tf.matmul(shifted, tf.constant(weights), name="proj/MatMul")
        centered = tf.subtract(product, tf.constant(near), name="center")
        total = tf.reduce_sum(tf.nn.relu(centered, name="act"), name="total")
        init, shutdown = npu_ops.initialize_system(), npu_ops.shutdown_system()
    with v1.Session(graph=graph, config=dump_config(base, dump_mode=dump_mode, device_target=device_target)) as sess:
        sess.run(init)  # device_target is an init option: each run initializes the system with its own
        sess.run(total, {x: values})
        sess.run(shutdown)
    dump.flush()
    (time_dir,) = os.listdir(base)
    return base / time_dir / "0"
