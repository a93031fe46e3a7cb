"""Keras 2.6 scripts read ``tf.keras.__version__``. Prints one RESULT line."""

import json

import tensorflow as tf

import npu_device

npu_device.open().as_default()

import tensorflow.keras as keras_module  # noqa: E402  (as scripts write it, after open)
from tensorflow import keras  # noqa: E402

print(
    "RESULT "
    + json.dumps(
        {
            "tf.keras.__version__": tf.keras.__version__,
            "from tensorflow import keras": keras.__version__,
            "import tensorflow.keras": keras_module.__version__,
            "tf.compat.v1.keras.__version__": tf.compat.v1.keras.__version__,
        }
    ),
    flush=True,
)
