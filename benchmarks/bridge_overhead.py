"""Cost of the session bridge.

1. Steady-state step time of a small MLP training loop in a bridged session (NpuOptimizer config) vs a plain
   session on the same graph, interleaved in one process (blocks of steps alternate). Target ratio <= 1.02.
2. Extra import time of `npu_bridge` over `tensorflow` alone, measured in fresh interpreters. Target <= 0.5 s.

Run: python benchmarks/bridge_overhead.py [--blocks 30] [--steps 50] [--imports 5]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import npu_bridge  # noqa: E402,F401
from npu_session_config import npu_config  # noqa: E402

v1 = tf.compat.v1


def build_mlp():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [64, 128])
        y = v1.placeholder(tf.float32, [64, 10])
        h = v1.layers.dense(x, 256, activation=tf.nn.relu)
        h = v1.layers.dense(h, 256, activation=tf.nn.relu)
        logits = v1.layers.dense(h, 10)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = v1.global_variables_initializer()
    return graph, x, y, train, init


def step_time_ratio(blocks, steps):
    graph, x, y, train, init = build_mlp()
    rng = np.random.RandomState(0)
    feed = {x: rng.rand(64, 128).astype(np.float32), y: np.eye(10, dtype=np.float32)[rng.randint(0, 10, 64)]}
    sessions = {"plain": v1.Session(graph=graph), "bridged": v1.Session(graph=graph, config=npu_config())}
    for sess in sessions.values():
        sess.run(init)
        for _ in range(steps):  # warm-up: graph optimization and allocator
            sess.run(train, feed)
    times = {name: [] for name in sessions}
    for block in range(blocks):
        order = list(sessions.items()) if block % 2 == 0 else list(reversed(sessions.items()))
        for name, sess in order:
            start = time.perf_counter()
            for _ in range(steps):
                sess.run(train, feed)
            times[name].append((time.perf_counter() - start) / steps)
    for sess in sessions.values():
        sess.close()
    plain, bridged = statistics.median(times["plain"]), statistics.median(times["bridged"])
    return plain, bridged


def import_seconds(code, repeats):
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=30, help="interleaved measurement blocks per session")
    parser.add_argument("--steps", type=int, default=50, help="training steps per block")
    parser.add_argument("--imports", type=int, default=5, help="fresh interpreters per import measurement")
    args = parser.parse_args()

    plain, bridged = step_time_ratio(args.blocks, args.steps)
    print(f"step time: plain {plain * 1e3:.3f} ms, bridged {bridged * 1e3:.3f} ms, "
          f"ratio {bridged / plain:.3f} (target <= 1.02)")
    tf_only = import_seconds("import tensorflow", args.imports)
    with_bridge = import_seconds("import tensorflow; import npu_bridge", args.imports)
    print(f"import: tensorflow {tf_only:.2f} s, tensorflow + npu_bridge {with_bridge:.2f} s, "
          f"extra {with_bridge - tf_only:.2f} s (target <= 0.5 s)")


if __name__ == "__main__":
    main()
