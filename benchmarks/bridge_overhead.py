"""Cost of the session bridge.

1. Steady-state step time of a small MLP training loop in a bridged session (NpuOptimizer config) vs a plain
   session on the same graph, interleaved in one process (blocks of steps alternate). Target ratio <= 1.02.
2. Extra import time of `npu_bridge` over `tensorflow` alone, measured in fresh interpreters. Target <= 0.5 s.

Run: python benchmarks/bridge_overhead.py [--blocks 30] [--steps 50] [--imports 5]
"""

import argparse
import functools
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
from bench_util import build_mlp, interleaved_times, npu_config  # noqa: E402

import npu_bridge  # noqa: E402,F401

v1 = tf.compat.v1


def step_time_ratio(blocks, steps):
    graph, train, init, feed = build_mlp(batch=64, inputs=128, hidden=256)
    sessions = {"plain": v1.Session(graph=graph), "bridged": v1.Session(graph=graph, config=npu_config())}
    for sess in sessions.values():
        sess.run(init)
        for _ in range(steps):  # warm-up: graph optimization and allocator
            sess.run(train, feed)
    times = interleaved_times(
        {name: functools.partial(sess.run, train, feed) for name, sess in sessions.items()}, blocks, steps
    )
    for sess in sessions.values():
        sess.close()
    return statistics.median(times["plain"]), statistics.median(times["bridged"])


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
    print(
        f"step time: plain {plain * 1e3:.3f} ms, bridged {bridged * 1e3:.3f} ms, "
        f"ratio {bridged / plain:.3f} (target <= 1.02)"
    )
    tf_only = import_seconds("import tensorflow", args.imports)
    with_bridge = import_seconds("import tensorflow; import npu_bridge", args.imports)
    print(
        f"import: tensorflow {tf_only:.2f} s, tensorflow + npu_bridge {with_bridge:.2f} s, "
        f"extra {with_bridge - tf_only:.2f} s (target <= 0.5 s)"
    )


if __name__ == "__main__":
    main()
