"""Helpers of the profiling tests: a small CNN trained in a profiled session, and readers of a profile."""

import csv
import decimal
import glob
import json
import os

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

from helpers.config import npu_config as _npu_config
from npu_bridge.core.profiling import layout, recorder
from npu_bridge.estimator import npu_ops

v1 = tf.compat.v1


def npu_config(**options):
    """An NpuOptimizer config with remapping off, as Ascend scripts write it (so ops keep their names)."""
    config = _npu_config(**options)
    config.graph_options.rewrite_options.remapping = rewriter_config_pb2.RewriterConfig.OFF
    return config


def num(text):
    """An exact number from a CSV cell (times are exact ns / 1000 with 3 decimals)."""
    return decimal.Decimal(text)


def profiling_options(output, **keys):
    """A profiling_options JSON text with ``output`` and the given keys."""
    return json.dumps({"output": str(output), **keys})


def build_cnn(batch=4, allreduce=False, conv_bias=False):
    """A conv + dense classifier on placeholders; gradients optionally all-reduced over a one-rank group.

    The conv has no bias unless ``conv_bias``: with oneDNN on, TensorFlow runs a Conv2D and the BiasAdd it feeds
    as one node named after the BiasAdd, whatever the remapper setting, and the tests name conv/Conv2D.

    Returns:
      (graph, tensors) with "train", "init", "shutdown" and "feed".
    """
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [batch, 8, 8, 3], name="x")
        y = v1.placeholder(tf.int32, [batch], name="y")
        net = v1.layers.conv2d(x, 4, 3, activation=tf.nn.relu, use_bias=conv_bias, name="conv")
        logits = v1.layers.dense(v1.layers.flatten(net), 10, name="dense")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        optimizer = v1.train.GradientDescentOptimizer(0.1)
        grads = optimizer.compute_gradients(loss)
        if allreduce:
            from tensorflow.python.ops import collective_ops

            grads = [
                (collective_ops.all_reduce_v2(g, group_size=1, group_key=1, instance_key=i + 1), v)
                for i, (g, v) in enumerate(grads)
            ]
        train = optimizer.apply_gradients(grads)
        init = v1.global_variables_initializer()
        shutdown = npu_ops.shutdown_system()
    rng = np.random.RandomState(0)
    feed = {x: rng.rand(batch, 8, 8, 3).astype(np.float32), y: rng.randint(0, 10, batch)}
    return graph, {"train": train, "init": init, "shutdown": shutdown, "feed": feed}


def train(config, steps=5, **model_args):
    """Trains the CNN ``steps`` steps in a session with ``config``, then shuts the NPU system down and closes the
    session, which ends a profile started by the options."""
    graph, t = build_cnn(**model_args)
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(t["init"])
        for _ in range(steps):
            sess.run(t["train"], t["feed"])
        sess.run(t["shutdown"])


def profiled_config(output, **keys):
    """An NpuOptimizer config with profiling_mode on and JSON profiling_options."""
    return npu_config(profiling_mode=True, profiling_options=profiling_options(output, **keys))


def the_profile(output):
    """The one profile directory under ``output``."""
    found = glob.glob(os.path.join(str(output), "PROF_*"))
    assert len(found) == 1, found
    return found[0]


def read_csv(profile_dir, prefix):
    """(header, rows as dicts) of an exported CSV."""
    path = layout.exported_file(profile_dir, prefix, "csv")
    assert path is not None, f"no {prefix} CSV in {profile_dir}"
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        return header, [dict(zip(header, row)) for row in reader]


def read_timeline(profile_dir):
    """The timeline's JSON object."""
    with open(layout.exported_file(profile_dir, "msprof", "json"), encoding="utf-8") as f:
        return json.load(f)


def models(profile_dir):
    """{model id: model dict} from info.json."""
    return {m["model_id"]: m for m in layout.read_info(profile_dir)["models"]}


def end_profiles():
    """Ends whatever a test left recording."""
    if recorder.scoped_settings() is not None:
        recorder.stop_scope()
    recorder.finish()


def assert_ops_within_iterations(profile_dir, model_id):
    """Every op of the model lies within its iteration: after the previous iteration's end, before its end."""
    _, steps = read_csv(profile_dir, "step_trace")
    ends = {int(r["Iteration ID"]): num(r["Iteration End(us)"]) for r in steps if int(r["Model ID"]) == model_id}
    _, ops = read_csv(profile_dir, "op_summary")
    checked = 0
    for op in ops:
        if int(op["Model ID"]) != model_id:
            continue
        iteration = int(op["Infer ID"])
        start, duration = num(op["Task Start Time(us)"]), num(op["Task Duration(us)"])
        assert duration >= 0
        assert start + duration <= ends[iteration], op
        if iteration - 1 in ends:
            assert start >= ends[iteration - 1], op
        checked += 1
    assert checked > 0
