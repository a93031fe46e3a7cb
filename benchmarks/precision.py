"""Step time of an MLP and a small CNN under each precision mode and backend, relative to must_keep_origin_dtype
on CPU (every mixed mode, v1 and v2 spellings, is done by the precision pass's own lists).

Every configuration gets its own bridged session (the precision mode and the backend are init options, so
the NPU system is shut down between session creations); after warm-up the sessions are timed in interleaved
blocks, so all configurations see the same machine load. The ratio is the median over blocks of (step time /
the baseline's step time in the same block), which tolerates load that drifts between blocks.

Run: python benchmarks/precision.py [--blocks 15] [--steps 20]
"""

import argparse
import functools
import os
import statistics

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from bench_util import interleaved_times, median_ratio, npu_config  # noqa: E402

import npu_bridge  # noqa: E402,F401
from npu_bridge.core.runtime import system  # noqa: E402

v1 = tf.compat.v1
v1.disable_eager_execution()

BASELINE = ("cpu", ("precision_mode", "must_keep_origin_dtype"))
MODES = (
    ("precision_mode", "must_keep_origin_dtype"),
    ("precision_mode", "allow_fp32_to_fp16"),
    ("precision_mode", "cube_fp16in_fp32out"),
    ("precision_mode", "force_fp16"),
    ("precision_mode", "allow_mix_precision"),
    ("precision_mode", "allow_mix_precision_fp16"),
    ("precision_mode", "allow_mix_precision_bf16"),
    ("precision_mode_v2", "mixed_float16"),
    ("precision_mode_v2", "mixed_bfloat16"),
)


def build_mlp():
    """784-512-512-10 with ReLU and dense softmax cross entropy, batch 64, trained by SGD."""
    graph = tf.Graph()
    with graph.as_default():
        images = v1.placeholder(tf.float32, [64, 784])
        labels = v1.placeholder(tf.float32, [64, 10])
        hidden = images
        for i, width in enumerate((512, 512)):
            hidden = tf.nn.relu(v1.layers.dense(hidden, width, name=f"hidden{i}"))
        logits = v1.layers.dense(hidden, 10, name="logits")
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = v1.global_variables_initializer()
    rng = np.random.RandomState(0)
    feed = {images: rng.rand(64, 784).astype(np.float32), labels: np.eye(10)[rng.randint(0, 10, 64)]}
    return graph, train, init, feed


def build_cnn():
    """Two conv layers, a dense layer and softmax cross entropy on 32x32x3 inputs, batch 32, trained by SGD."""
    graph = tf.Graph()
    with graph.as_default():
        images = v1.placeholder(tf.float32, [32, 32, 32, 3])
        labels = v1.placeholder(tf.int32, [32])
        hidden = tf.nn.relu(tf.nn.conv2d(images, v1.get_variable("conv1", [3, 3, 3, 32]), 1, "SAME"))
        hidden = tf.nn.max_pool2d(hidden, 2, 2, "VALID")
        hidden = tf.nn.relu(tf.nn.conv2d(hidden, v1.get_variable("conv2", [3, 3, 32, 64]), 1, "SAME"))
        hidden = tf.nn.max_pool2d(hidden, 2, 2, "VALID")
        logits = tf.matmul(tf.reshape(hidden, [32, 8 * 8 * 64]), v1.get_variable("dense", [8 * 8 * 64, 10]))
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = v1.global_variables_initializer()
    rng = np.random.RandomState(0)
    feed = {images: rng.rand(32, 32, 32, 3).astype(np.float32), labels: rng.randint(0, 10, 32)}
    return graph, train, init, feed


def configurations():
    backends = ["cpu", "ascend"] + (["gpu"] if tf.config.list_physical_devices("GPU") else [])
    return [(backend, mode) for backend in backends for mode in MODES]


def measure(model, build, args):
    """Prints the step time and ratio of every configuration for one model."""
    graph, train, init, feed = build()
    sessions = {}
    for key in configurations():
        system.shutdown(force=True)  # the next session's init options (backend, precision) take effect
        option, value = key[1]
        sess = v1.Session(graph=graph, config=npu_config(device_target=key[0], **{option: value}))
        sess.run(init)
        for _ in range(args.steps):  # warm-up: graph rewrite, allocator
            sess.run(train, feed)
        sessions[key] = sess
    times = interleaved_times(
        {key: functools.partial(sess.run, train, feed) for key, sess in sessions.items()}, args.blocks, args.steps
    )
    print(f"{model}: {'backend':8} {'precision mode':44} {'ms/step':>8} {'ratio':>6}")
    for key, samples in times.items():
        ratio = median_ratio(samples, times[BASELINE])
        mode = f"{key[1][0]}={key[1][1]}"
        print(f"{model}: {key[0]:8} {mode:44} {statistics.median(samples) * 1e3:8.2f} {ratio:6.2f}", flush=True)
    for sess in sessions.values():
        sess.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=15)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)

    measure("mlp", build_mlp, args)
    measure("cnn", build_cnn, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
