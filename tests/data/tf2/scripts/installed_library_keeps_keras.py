"""User code and an installed package import the same names after ``import npu_device``: the package (a module in
a site-packages directory on PYTHONPATH) keeps Keras 3 and TensorFlow's own ``tensorflow.python.keras``, the
script gets tf_keras, by import statements and by ``importlib.import_module``. Prints one RESULT line."""

# npu_device comes before the library on purpose: the library keeps Keras 3 all the same.
# isort: skip_file

import importlib
import json
import sys

import npu_device  # noqa: F401
import keras_library  # installed: site-packages
import keras
from tensorflow.python.keras import layers

print(
    "RESULT "
    + json.dumps(
        {
            "library": keras_library.SEEN,
            "user": {
                "keras": keras.__version__,
                "keras.layers.core.Dropout": keras.layers.core.Dropout.__module__,
                "tensorflow.python.keras.layers.Dense": layers.Dense.__module__,
                "import_module keras.layers.core": importlib.import_module("keras.layers.core").Dense.__module__,
            },
            "sys.modules['keras']": sys.modules["keras"].__version__,
        }
    ),
    flush=True,
)
