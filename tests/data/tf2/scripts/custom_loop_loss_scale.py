"""A custom training loop in a tf.function with NpuLossScaleOptimizer, as the zoo's BERT scripts write it; step 3
multiplies the loss by a poison (inf, or a large finite factor whose fp16 gradients overflow), a step that must be
skipped (weights unchanged, a dynamic loss scale halved). Usage: custom_loop_loss_scale.py dynamic|static POISON.
Prints one RESULT line."""

import json
import sys

import numpy as np
import tensorflow as tf

import npu_device
from npu_device.train.optimizer import NpuLossScaleOptimizer

npu_device.global_options().precision_mode = "allow_mix_precision"
npu_device.open().as_default()

dynamic = sys.argv[1] == "dynamic"
poison_factor = float(sys.argv[2])
rng = np.random.RandomState(0)
features = tf.constant(rng.rand(32, 8).astype(np.float32))
targets = tf.constant(rng.rand(32, 1).astype(np.float32))
dense = tf.keras.layers.Dense(1)
dense.build((None, 8))
if dynamic:
    optimizer = NpuLossScaleOptimizer(tf.keras.optimizers.SGD(0.05), dynamic=True, initial_scale=256)
else:
    optimizer = NpuLossScaleOptimizer(tf.keras.optimizers.SGD(0.05), dynamic=False, initial_scale=128)


@tf.function
def train_step(poison):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(dense(features) - targets)) * poison
        scaled = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, dense.trainable_variables))
    optimizer.apply_gradients(zip(grads, dense.trainable_variables))
    return loss


steps = []
for step in range(5):
    before = dense.kernel.numpy().copy()
    poison = tf.constant(poison_factor if step == 3 else 1.0, tf.float32)
    loss = float(train_step(poison).numpy())
    steps.append(
        {
            "loss": loss if np.isfinite(loss) else str(loss),
            "changed": bool(np.any(dense.kernel.numpy() != before)),
            "finite": bool(optimizer.last_step_finite.numpy()),
            "scale": float(optimizer.loss_scale.numpy()),
        }
    )
print("RESULT " + json.dumps({"steps": steps, "iterations": int(optimizer.iterations.numpy())}), flush=True)
