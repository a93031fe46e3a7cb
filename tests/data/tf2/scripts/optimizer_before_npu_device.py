"""``from tensorflow.keras.optimizers import Adam`` above ``import npu_device`` (an Oct-ResNet script of the zoo),
then ``compile`` in TF1 graph mode behind ``compat.enable_v1()``: with ``python -m npu_bridge.tf2`` the early name is
Keras 2.6's OptimizerV2 Adam, whose config a graph-mode ``compile`` can read. Prints one RESULT line."""

# The import order is what this script tests.
# isort: skip_file

from tensorflow.keras.optimizers import Adam

import json

import numpy as np
import tensorflow as tf

import npu_device

npu_device.compat.enable_v1()
tf.compat.v1.disable_v2_behavior()

model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
model.compile(loss="mse", optimizer=Adam(lr=0.01))
history = model.fit(np.ones((8, 3), np.float32), np.zeros((8, 1), np.float32), epochs=2, verbose=0)
print("RESULT " + json.dumps({"adam": Adam.__module__, "epochs": len(history.history["loss"])}), flush=True)
