"""What a TF1 script's process costs from start to exit as npu_bridge runs it, against the same script without
each of two start-up measures, in the same run:

- ``unfrozen``: the script gives TensorFlow's objects back to the cyclic collector at once (``gc.unfreeze()`` right
  after its imports), which switching npu_bridge on froze out of the collector's walks;
- ``no room +K``: TensorFlow's import runs without the roomy frame (``runtime/data_stack.py``), K plain frames
  deeper. Without it, CPython maps and unmaps a frame-stack chunk on each call that crosses a chunk's end, and
  how many calls do depends on where the import's frames fall: hence several depths.

The script is what zoo scripts start with: ``from npu_bridge.npu_init import *``, a small dense model and 20 Adam
steps in an NPU session. CPU seconds (user + system, the child's) and wall seconds, medians of --starts alternating
rounds. Ratio = baseline / as run.

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
{before_imports}
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


NO_ROOM = """
from npu_bridge.core.runtime import data_stack


def nested(depth, function, args):
    return function(*args) if depth == 0 else nested(depth - 1, function, args)


data_stack.call_with_room = lambda function, *args: nested({depth}, function, args)
"""
NO_ROOM_DEPTHS = range(4)  # extra plain frames: where the import's frames fall against chunk ends
VARIANTS = (("as run", "", ""), ("unfrozen", "", "import gc\ngc.unfreeze()")) + tuple(
    (f"no room +{depth}", NO_ROOM.format(depth=depth), "") for depth in NO_ROOM_DEPTHS
)


def _run(path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, path], check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=5, help="rounds of one run of each script (default 5)")
    starts = parser.parse_args().starts
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for name, before_imports, after_imports in VARIANTS:
            paths[name] = os.path.join(folder, f"{name.replace(' ', '_')}.py")
            with open(paths[name], "w", encoding="utf-8") as f:
                f.write(SCRIPT.format(before_imports=before_imports, after_imports=after_imports))
        results = {name: [] for name in paths}
        for _ in range(starts):
            for name, path in paths.items():
                results[name].append(_run(path))
    cpu = {name: statistics.median(r[0] for r in runs) for name, runs in results.items()}
    wall = {name: statistics.median(r[1] for r in runs) for name, runs in results.items()}
    print(f"start to exit of a TF1 script, medians of {starts} rounds")
    for label, seconds in (("CPU: ", cpu), ("wall:", wall)):
        for baseline in [name for name, _, _ in VARIANTS[1:]]:
            ratio = seconds[baseline] / seconds["as run"]
            print(f"  {label} {baseline} {seconds[baseline]:.2f} s, as run {seconds['as run']:.2f} s: {ratio:.2f}x")


if __name__ == "__main__":
    main()
