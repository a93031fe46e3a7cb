"""A convolution's filter gradient that overflows fp16, computed with GradientTape in a tf.function under
precision_mode allow_mix_precision (Conv2DBackpropFilter is white-listed, so its output is fp16). Each of the 9
filter taps sums 4 products 300 * 1000: 1.2e6 in float32, beyond fp16's largest value 65504. Prints one RESULT
line with the gradient."""

import json

import numpy as np
import tensorflow as tf

import npu_device

npu_device.global_options().precision_mode = "allow_mix_precision"
npu_device.open().as_default()

filters = tf.Variable(np.ones((3, 3, 1, 1), np.float32))


@tf.function
def filter_gradient(images, factor):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.conv2d(images, filters, 1, "VALID") * factor)
    return tape.gradient(loss, filters)


gradient = filter_gradient(tf.constant(np.full((1, 4, 4, 1), 300.0, np.float32)), tf.constant(1000.0)).numpy()
print("RESULT " + json.dumps({"gradient": [str(v) for v in gradient.ravel()]}), flush=True)
