"""A small ResNet-style custom training loop (conv + batch norm + relu residual blocks, SGD with momentum) in a
tf.function with precision_mode allow_mix_precision, on inputs (up to 3000) large enough that the fp16 convolutions
and their gradients overflow: the step of a ResNet-101 script in the model zoo, made small.
Usage: resnet_mixed_precision_loop.py [STEPS]. Prints one RESULT line with the loss of every step."""

import json
import sys

import numpy as np
import tensorflow as tf

import npu_device

npu_device.global_options().precision_mode = "allow_mix_precision"
npu_device.open().as_default()
tf.keras.utils.set_random_seed(0)

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
rng = np.random.RandomState(0)
images = tf.constant((rng.rand(8, 16, 16, 3) * 3000.0).astype(np.float32))
labels = tf.constant(rng.randint(0, 10, 8))
layers = tf.keras.layers


def block(x, filters):
    y = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
    y = layers.BatchNormalization()(y)
    y = layers.ReLU()(y)
    y = layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
    y = layers.BatchNormalization()(y)
    return layers.ReLU()(layers.Add()([x, y]))


inputs = tf.keras.Input((16, 16, 3))
x = layers.Conv2D(16, 3, padding="same", use_bias=False)(inputs)
for _ in range(3):
    x = block(x, 16)
x = layers.GlobalAveragePooling2D()(x)
model = tf.keras.Model(inputs, layers.Dense(10)(x))
optimizer = tf.keras.optimizers.SGD(0.01, momentum=0.9)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


losses = [float(train_step(images, labels).numpy()) for _ in range(steps)]
print("RESULT " + json.dumps({"losses": [v if np.isfinite(v) else str(v) for v in losses]}), flush=True)
