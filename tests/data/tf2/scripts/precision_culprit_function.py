"""A TF2 script whose fp16 run diverges because of one op of a tf.function (npu_device, allow_mix_precision):
branch CULPRIT's MatMul gives values beyond float16's range; every other op only loses fp16 rounding. It prints
``loss = <value>`` after each of two calls, for ``npu-debug bisect``."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import npu_device  # noqa: E402

BRANCHES = 4
CULPRIT = 2
npu_device.global_options().precision_mode = "allow_mix_precision"
npu_device.open().as_default()
rng = np.random.RandomState(0)
weights = []
for i in range(BRANCHES):
    w = rng.uniform(0.5, 1.5, (8, 8)).astype(np.float32) / 8
    weights.append((tf.constant(w * 1e5), 1e-4) if i == CULPRIT else (tf.constant(w), 0.5))


@tf.function
def model(x):
    branches = []
    for i, (w, scale) in enumerate(weights):
        with tf.name_scope(f"branch_{i:02d}"):
            value = tf.multiply(tf.matmul(x, w, name="matmul"), scale, name="scale")
            value = tf.nn.relu(tf.add(value, 0.1, name="bias"), name="relu")
            value = tf.subtract(tf.multiply(value, 1.1, name="grow"), 0.01, name="sub")
            branches.append(tf.square(value, name="square"))
    return tf.reduce_sum(tf.add_n(branches, name="total"), name="loss")


x = tf.constant(rng.uniform(0.5, 1.5, (4, 8)).astype(np.float32))
for step in range(2):
    print(f"step {step}: loss = {float(model(x)):.6f}", flush=True)
