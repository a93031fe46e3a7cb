"""Cost of profiling: step time of a small CNN with profiling on vs off, measured in one run. Target <= 1.3x.

One bridged session trains a small CNN (two conv + pool layers and two dense layers, batch 32 of 32x32x3).
Blocks of steps alternate between profiled (inside a ``Profiler`` scope, which traces exactly as
``profiling_mode`` does) and not profiled; the ratio compares the median block step times. The time to export
each profiled block (summaries, timeline, report; done when the scope ends, outside the timed steps) is
reported per run too.

Run: python benchmarks/profiling.py [--blocks 10] [--steps 40] [--batch 32]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "3")  # no summary per block

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from bench_util import npu_config  # noqa: E402

import npu_bridge  # noqa: E402,F401
from npu_bridge.profiler.profiler import Profiler  # noqa: E402

v1 = tf.compat.v1


def build_cnn(batch):
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [batch, 32, 32, 3])
        y = v1.placeholder(tf.int32, [batch])
        h = v1.layers.conv2d(x, 32, 3, padding="same", activation=tf.nn.relu)
        h = v1.layers.max_pooling2d(h, 2, 2)
        h = v1.layers.conv2d(h, 64, 3, padding="same", activation=tf.nn.relu)
        h = v1.layers.max_pooling2d(h, 2, 2)
        h = v1.layers.dense(v1.layers.flatten(h), 128, activation=tf.nn.relu)
        logits = v1.layers.dense(h, 10)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = v1.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
        init = v1.global_variables_initializer()
    return graph, x, y, train, init


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=10, help="blocks per variant")
    parser.add_argument("--steps", type=int, default=40, help="steps per block")
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args(argv)
    graph, x, y, train, init = build_cnn(args.batch)
    rng = np.random.RandomState(0)
    feed = {x: rng.rand(args.batch, 32, 32, 3).astype(np.float32), y: rng.randint(0, 10, args.batch)}
    times = {"off": [], "on": []}
    export_seconds = []
    with tempfile.TemporaryDirectory() as output, v1.Session(graph=graph, config=npu_config()) as sess:
        sess.run(init)
        for _ in range(args.steps):  # warm-up: graph optimization, allocator
            sess.run(train, feed)
        for block in range(2 * args.blocks):
            variant = ("off", "on")[block % 2]
            profiler = Profiler(level="L1", output_path=output) if variant == "on" else None
            if profiler:
                profiler.start()
            start = time.perf_counter()
            for _ in range(args.steps):
                sess.run(train, feed)
            times[variant].append((time.perf_counter() - start) / args.steps)
            if profiler:
                stop = time.perf_counter()
                profiler.stop()
                export_seconds.append((time.perf_counter() - stop) / args.steps)
    off, on = statistics.median(times["off"]), statistics.median(times["on"])
    print(f"small CNN, batch {args.batch}, {args.blocks} blocks of {args.steps} steps per variant")
    print(f"step time, profiling off: {off * 1e3:.3f} ms")
    print(f"step time, profiling on:  {on * 1e3:.3f} ms")
    print(f"ratio on / off: {on / off:.3f} (target <= 1.3)")
    print(
        f"export after the run (summaries, timeline, report): {statistics.median(export_seconds) * 1e3:.3f} ms "
        "per profiled step"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
