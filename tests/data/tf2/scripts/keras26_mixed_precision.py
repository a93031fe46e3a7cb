"""TensorFlow 2.6's ``tf.keras.mixed_precision.experimental`` as the official models' ``performance.py`` uses it (the
zoo's BERT, Transformer and ResNet50): a policy with a loss scale, ``set_policy``, a fixed-scale
``LossScaleOptimizer`` in ``fit``, and back to float32. Prints one RESULT line."""

# isort: skip_file

import json

import numpy as np
import tensorflow as tf

import npu_device
from tensorflow.keras.mixed_precision import experimental as mixed_precision

npu_device.open().as_default()

policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16", loss_scale=128)
tf.keras.mixed_precision.experimental.set_policy(policy)
model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
fixed = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 64)
dynamic = tf.keras.mixed_precision.experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), "dynamic")
model.compile(fixed, "mse")
history = model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), epochs=2, verbose=0)
seen = {
    "policy": mixed_precision.global_policy().name,
    "loss_scale": policy.loss_scale,
    "auto": mixed_precision.Policy("mixed_float16").loss_scale,
    "float32_auto": mixed_precision.Policy("float32").loss_scale,
    "layer": [model.layers[0].compute_dtype, model.layers[0].variable_dtype],
    "fixed": [fixed.dynamic, float(fixed.loss_scale)],
    "dynamic": [dynamic.dynamic, float(dynamic.loss_scale)],
    "is_keras_lso": isinstance(fixed, tf.keras.mixed_precision.LossScaleOptimizer),
    "finite": bool(np.isfinite(history.history["loss"]).all()),
}
try:
    mixed_precision.Policy("mixed_float16", loss_scale=-1)
except ValueError as error:
    seen["bad"] = str(error)
mixed_precision.set_policy("float32")
seen["after"] = tf.keras.mixed_precision.global_policy().name
print("RESULT " + json.dumps(seen), flush=True)
