"""A GAN-style script: generator and discriminator steps are tf.functions called from an outer tf.function,
the device is opened at module level, XLA is requested (the adapter drops it), gelu is probed with hasattr, and a
copied npu_ops.py registers its own gradients. Prints one RESULT line."""

import json

import numpy as np
import tensorflow as tf
import vendored_npu_ops as npu_ops

import npu_device

npu_device.open().as_default()
gelu = npu_device.ops.gelu if hasattr(npu_device.ops, "gelu") else tf.nn.gelu

tf.keras.utils.set_random_seed(0)
rng = np.random.RandomState(0)
real = tf.constant(rng.normal(3.0, 0.5, (64, 2)).astype(np.float32))
generator = tf.keras.Sequential([tf.keras.layers.Dense(16, activation=gelu), tf.keras.layers.Dense(2)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
generator.build((None, 4))
discriminator.build((None, 2))
g_opt, d_opt = tf.keras.optimizers.Adam(0.005), tf.keras.optimizers.Adam(0.005)
bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)


@tf.function
def discriminator_step(noise):
    with tf.GradientTape() as tape:
        fake = generator(noise)
        hidden = npu_ops.dropout(discriminator(real), 0.9)
        loss = bce(tf.ones_like(hidden), hidden) + bce(tf.zeros((64, 1)), discriminator(fake))
    d_opt.apply_gradients(
        zip(tape.gradient(loss, discriminator.trainable_variables), discriminator.trainable_variables)
    )
    return loss


@tf.function
def generator_step(noise):
    with tf.GradientTape() as tape:
        loss = bce(tf.ones((64, 1)), discriminator(generator(noise)))
    g_opt.apply_gradients(zip(tape.gradient(loss, generator.trainable_variables), generator.trainable_variables))
    return loss


@tf.function(jit_compile=True)
def train_step(noise):
    return discriminator_step(noise), generator_step(noise)


noise = tf.constant(rng.rand(256, 4).astype(np.float32))
start = generator(noise).numpy().mean(0)
first = None
for _ in range(150):
    d_loss, g_loss = train_step(tf.constant(rng.rand(64, 4).astype(np.float32)))
    first = first if first is not None else float(d_loss)
mean = generator(noise).numpy().mean(0)
result = {"d_first": first, "d_last": float(d_loss), "start_mean": start.tolist(), "fake_mean": mean.tolist()}
print("RESULT " + json.dumps(result), flush=True)
