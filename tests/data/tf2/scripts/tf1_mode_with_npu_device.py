"""A TF1-mode script (``python -m npu_bridge.tf1``) that also imports ``npu_device`` and Keras 2.6 paths: both
import routes hold, in either order of the statements. ``tensorflow`` is TensorFlow 1.x before and after ``import
npu_device``; ``keras.layers.core`` and ``tensorflow.python.keras`` are tf_keras; an installed library (a
site-packages module on PYTHONPATH) keeps TensorFlow 2 and Keras 3. Prints one RESULT line."""

# The import order is what this script tests.
# isort: skip_file

import json

import tensorflow as tf_before

import npu_device  # noqa: F401
import keras_library  # installed: site-packages
from keras.layers.core import Dropout
from tensorflow.python.keras import layers
import tensorflow as tf_after

x = tf_after.placeholder(tf_after.float32, [None, 2])  # TensorFlow 1.x: graph mode, placeholders
with tf_after.Session() as session:
    doubled = session.run(x * 2.0, feed_dict={x: [[1.0, 2.0]]}).tolist()
print(
    "RESULT "
    + json.dumps(
        {
            "same_tensorflow": tf_before is tf_after,
            "v1": hasattr(tf_before, "placeholder") and not tf_before.executing_eagerly(),
            "doubled": doubled,
            "dropout": Dropout.__module__,
            "dense": layers.Dense.__module__,
            "library": keras_library.SEEN,
        }
    ),
    flush=True,
)
