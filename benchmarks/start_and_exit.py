"""What a TF1 script's process costs from start to exit, with TensorFlow's objects frozen out of the cyclic
collector's walks (what switching npu_bridge on does) against the same script giving them back at once
(``gc.unfreeze()`` right after its imports: the process as it was before), in the same run.

The script is what zoo scripts start with: ``from npu_bridge.npu_init import *``, a small dense model and 20 Adam
steps in an NPU session. CPU seconds (user + system, the child's) and wall seconds, medians of --starts alternating
pairs. Ratio = baseline / frozen.

Run: PYTHONPATH=. python benchmarks/start_and_exit.py [--starts 5]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SCRIPT = """
from npu_bridge.npu_init import *
import tensorflow as tf
{after_imports}
v1 = tf.compat.v1
v1.disable_eager_execution()
x = v1.placeholder(tf.float32, [None, 8])
loss = tf.reduce_mean(tf.square(v1.layers.dense(x, 4)))
step = v1.train.AdamOptimizer(0.1).minimize(loss)
with v1.Session(config=npu_config_proto()) as sess:
    sess.run(v1.global_variables_initializer())
    for _ in range(20):
        sess.run(step, {{x: [[1.0] * 8] * 4}})
"""


def _run(path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, path], check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=5, help="alternating pairs of runs (default 5)")
    starts = parser.parse_args().starts
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for name, after_imports in (("frozen", ""), ("unfrozen", "import gc\ngc.unfreeze()")):
            paths[name] = os.path.join(folder, f"{name}.py")
            with open(paths[name], "w", encoding="utf-8") as f:
                f.write(SCRIPT.format(after_imports=after_imports))
        results = {name: [] for name in paths}
        for _ in range(starts):
            for name, path in paths.items():
                results[name].append(_run(path))
    cpu = {name: statistics.median(r[0] for r in runs) for name, runs in results.items()}
    wall = {name: statistics.median(r[1] for r in runs) for name, runs in results.items()}
    print(f"start to exit of a TF1 script, medians of {starts} pairs")
    for label, seconds in (("CPU: ", cpu), ("wall:", wall)):
        ratio = seconds["unfrozen"] / seconds["frozen"]
        print(f"  {label} unfrozen {seconds['unfrozen']:.2f} s, frozen {seconds['frozen']:.2f} s: {ratio:.2f}x")


if __name__ == "__main__":
    main()
