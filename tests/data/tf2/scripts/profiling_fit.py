"""A Keras fit with profiling switched on the zoo's way (``--profiling`` sets profiling_config.enable_profiling and
a JSON profiling_options built in the script); prints the steps it ran, and whether tf.function calls are wrapped
for profiling, as one RESULT line."""

import argparse
import json

import numpy as np
import tensorflow as tf
from tensorflow.python.eager.polymorphic_function import polymorphic_function

import npu_device

parser = argparse.ArgumentParser()
parser.add_argument("--profiling", type=int, default=1)
parser.add_argument("--profiling_dump_path", default="/home/data")
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args()
if args.profiling:
    profiling_options = (
        '{"output":"' + args.profiling_dump_path + '", "training_trace":"on", "task_trace":"on", '
        '"aicpu":"on", "fp_point":"", "bp_point":"", "aic_metrics":"PipeUtilization"}'
    )
    npu_device.global_options().profiling_config.enable_profiling = True
    npu_device.global_options().profiling_config.profiling_options = profiling_options
npu_device.open().as_default()

rng = np.random.RandomState(0)
features = rng.rand(64, 20).astype(np.float32)
labels = (features[:, :10].sum(1) > features[:, 10:].sum(1)).astype(np.int64)
dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(16, drop_remainder=True)
model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(2)])
model.compile(
    optimizer=tf.keras.optimizers.SGD(0.1),
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
)
history = model.fit(dataset, epochs=args.epochs, verbose=0)
wrapped = polymorphic_function.Function.__call__.__code__.co_name == "profiled_call"
result = {"steps": 4 * args.epochs, "losses": history.history["loss"], "wrapped": wrapped}
print("RESULT " + json.dumps(result), flush=True)
