"""What the TF1 mode costs, against baselines measured in the same run.

1. Start-up: seconds for `python -m npu_bridge.tf1 script.py` on a script that only imports TensorFlow and runs one
   op, vs `python script.py` on the same script migrated by hand (`import npu_bridge`, `tensorflow.compat.v1`,
   `disable_v2_behavior()`). Alternating, --starts pairs, medians. Target: the mode adds at most 0.5 s.
2. Step time: an MLP (784-256-256-10, batch 64, Adam, `sess.run(train, feed_dict)` in an NpuOptimizer session)
   written as TF 1.15 code and run in the mode, vs the same script migrated by hand. Median of --steps steps after
   a warm-up, each in its own process, alternating, --runs pairs. Ratio = migrated step time / mode step time
   (target >= 0.98).

3. Keras import: seconds a script spends, after importing TensorFlow, importing the standalone ``keras`` it was
   written for and building one layer, in the mode (``keras`` is tf_keras, Keras 2, there), vs the same script
   migrated by hand to ``import tf_keras as keras``, timed inside each process. Alternating, --starts pairs,
   medians. Target: the mode adds at most 0.3 s.

Run: PYTHONPATH=. python benchmarks/tf1_mode.py [--starts 5] [--runs 3] [--steps 300]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

IMPORT_ONLY_TF1 = "import tensorflow as tf\ntf.Session().run(tf.constant(1.0))\n"
IMPORT_ONLY_MIGRATED = """import npu_bridge
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
tf.Session().run(tf.constant(1.0))
"""
KERAS_TF1 = """import time
import tensorflow as tf
start = time.perf_counter()
import keras
keras.layers.Dense(1)(tf.zeros([1, 1]))
print("STEP", time.perf_counter() - start)
"""
KERAS_MIGRATED = """import time
import npu_bridge
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
start = time.perf_counter()
import tf_keras as keras
keras.layers.Dense(1)(tf.zeros([1, 1]))
print("STEP", time.perf_counter() - start)
"""
TRAINING = """
import sys, time
import numpy as np
{header}
x = tf.placeholder(tf.float32, [None, 784])
y = tf.placeholder(tf.int64, [None])
h = tf.layers.dense(x, 256, tf.nn.relu)
h = tf.layers.dense(h, 256, tf.nn.relu)
logits = tf.layers.dense(h, 10)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train = tf.train.AdamOptimizer(1e-3).minimize(loss)
config = tf.ConfigProto()
config.graph_options.rewrite_options.custom_optimizers.add().name = "NpuOptimizer"
rng = np.random.RandomState(0)
feed = {{x: rng.rand(64, 784).astype(np.float32), y: rng.randint(0, 10, 64)}}
steps = int(sys.argv[1])
with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(20):
        sess.run(train, feed)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        sess.run(train, feed)
        times.append(time.perf_counter() - start)
print("STEP", float(np.median(times)))
"""
TF1_HEADER = "from npu_bridge.npu_init import *\nimport tensorflow as tf"
MIGRATED_HEADER = "from npu_bridge.npu_init import *\nimport tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()"


def _environment():
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", NPU_BRIDGE_TF1_QUIET="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(here), os.environ.get("PYTHONPATH")) if p)
    env.pop("NPU_BRIDGE_TF1", None)
    return env


def _command(script, tf1):
    return [sys.executable, "-m", "npu_bridge.tf1", script] if tf1 else [sys.executable, script]


def _seconds(command, cwd):
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=_environment(), check=True, capture_output=True)
    return time.perf_counter() - start


def _step(command, cwd):
    result = subprocess.run(command, cwd=cwd, env=_environment(), check=True, capture_output=True, text=True)
    return float(next(line.split()[1] for line in result.stdout.splitlines() if line.startswith("STEP")))


def main(argv=None):
    parser = argparse.ArgumentParser(description="TF1 mode start-up and step time vs scripts migrated by hand")
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        scripts = {
            "start_tf1": IMPORT_ONLY_TF1,
            "start_migrated": IMPORT_ONLY_MIGRATED,
            "keras_tf1": KERAS_TF1,
            "keras_migrated": KERAS_MIGRATED,
            "train_tf1": TRAINING.format(header=TF1_HEADER),
            "train_migrated": TRAINING.format(header=MIGRATED_HEADER),
        }
        for name, text in scripts.items():
            with open(os.path.join(work, f"{name}.py"), "w", encoding="utf-8") as f:
                f.write(text)
        starts = {"tf1": [], "migrated": [], "keras_tf1": [], "keras_migrated": []}
        for _ in range(args.starts):
            starts["migrated"].append(_seconds(_command("start_migrated.py", False), work))
            starts["tf1"].append(_seconds(_command("start_tf1.py", True), work))
            starts["keras_migrated"].append(_step(_command("keras_migrated.py", False), work))
            starts["keras_tf1"].append(_step(_command("keras_tf1.py", True), work))
        steps = {"tf1": [], "migrated": []}
        for _ in range(args.runs):
            steps["migrated"].append(_step(_command("train_migrated.py", False) + [str(args.steps)], work))
            steps["tf1"].append(_step(_command("train_tf1.py", True) + [str(args.steps)], work))
    start_tf1, start_migrated = statistics.median(starts["tf1"]), statistics.median(starts["migrated"])
    step_tf1, step_migrated = statistics.median(steps["tf1"]), statistics.median(steps["migrated"])
    print(f"start-up, medians of {args.starts} alternating pairs (import TensorFlow, run one op)")
    print(f"  migrated by hand (baseline):     {start_migrated:7.2f} s")
    print(f"  python -m npu_bridge.tf1:        {start_tf1:7.2f} s")
    print(f"  difference:                      {start_tf1 - start_migrated:+7.2f} s (target <= 0.5 s)")
    keras_tf1, keras_migrated = statistics.median(starts["keras_tf1"]), statistics.median(starts["keras_migrated"])
    print(f"Keras import after TensorFlow's, medians of {args.starts} alternating pairs (Keras 2, one layer)")
    print(f"  migrated by hand (tf_keras):     {keras_migrated:7.3f} s")
    print(f"  mode (standalone keras):         {keras_tf1:7.3f} s")
    print(f"  difference:                      {keras_tf1 - keras_migrated:+7.3f} s (target <= 0.3 s)")
    print(f"step time, MLP 784-256-256-10 batch 64, medians of {args.runs} runs of {args.steps} steps")
    print(f"  migrated by hand (baseline):     {step_migrated * 1e3:7.3f} ms")
    print(f"  TF1 mode:                        {step_tf1 * 1e3:7.3f} ms")
    print(f"  ratio migrated/mode:             {step_migrated / step_tf1:7.3f} (target >= 0.98)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
