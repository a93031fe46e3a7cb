"""Training step of a conv net built in fp16 (as official ResNet's --dtype=fp16 builds it) in a bridged session,
whose convolution gradients compute in float32 on the CPU, against the same step in a plain TensorFlow session,
which runs TensorFlow's own fp16 kernels, and against the float32 model in a plain session.

Three conv layers (3x3, 32-64-64 channels, 32x32 images, batch 16) with a depthwise conv, trained by SGD. The
sessions are timed in interleaved blocks; the ratios are medians over blocks of (step time / the bridged fp16
step's time in the same block). Run with TF_ENABLE_ONEDNN_OPTS=0 and =1 to see both CPU kernel libraries.

Run: python benchmarks/fp16_convolutions.py [--blocks 7] [--steps 3]
"""

import argparse
import os
import statistics

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from bench_util import interleaved_times, median_ratio, npu_config  # noqa: E402

import npu_bridge  # noqa: E402,F401

v1 = tf.compat.v1
v1.disable_eager_execution()


def build(dtype):
    """The conv net computing in ``dtype`` on float32 variables; returns (graph, train op, init, feed)."""
    graph = tf.Graph()
    with graph.as_default():
        images = v1.placeholder(dtype, [16, 32, 32, 3])
        labels = v1.placeholder(tf.int32, [16])
        hidden = images
        for i, width in enumerate((32, 64, 64)):
            kernel = v1.get_variable(f"kernel{i}", [3, 3, hidden.shape[-1], width])
            hidden = tf.nn.relu(tf.nn.conv2d(hidden, tf.cast(kernel, dtype), 2 if i else 1, "SAME"))
        depthwise = v1.get_variable("depthwise", [3, 3, 64, 1])
        hidden = tf.nn.depthwise_conv2d(hidden, tf.cast(depthwise, dtype), [1, 1, 1, 1], "SAME")
        logits = v1.layers.dense(tf.reshape(tf.cast(hidden, tf.float32), [16, -1]), 10)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = v1.global_variables_initializer()
    rng = np.random.RandomState(0)
    feed = {images: rng.rand(16, 32, 32, 3).astype(dtype.as_numpy_dtype), labels: rng.randint(0, 10, 16)}
    return graph, train, init, feed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=7)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    configs = {
        "fp16, bridged (conv gradients in float32)": (tf.float16, npu_config()),
        "fp16, plain TensorFlow (its fp16 kernels)": (tf.float16, v1.ConfigProto()),
        "float32, plain TensorFlow": (tf.float32, v1.ConfigProto()),
    }
    runs, sessions = {}, []
    for name, (dtype, config) in configs.items():
        graph, train, init, feed = build(dtype)
        sess = v1.Session(graph=graph, config=config)
        sessions.append(sess)
        sess.run(init)
        sess.run(train, feed)  # warm-up: optimization and first-run allocations
        runs[name] = lambda sess=sess, train=train, feed=feed: sess.run(train, feed)
    times = interleaved_times(runs, args.blocks, args.steps)
    baseline = next(iter(configs))
    onednn = os.environ.get("TF_ENABLE_ONEDNN_OPTS", "TensorFlow's default")
    print(f"TF_ENABLE_ONEDNN_OPTS={onednn}; {args.blocks} blocks of {args.steps} steps")
    for name, samples in times.items():
        ratio = median_ratio(samples, times[baseline])
        print(f"{name:44s} {statistics.median(samples) * 1e3:9.1f} ms/step  {ratio:7.2f}x the bridged fp16 step")
    for sess in sessions:
        sess.close()


if __name__ == "__main__":
    main()
