"""A Keras 2.6 import before ``import npu_device`` (as in a zoo model whose model.py imports the copied
npu_convert_dropout first): it resolves only when the script runs with ``python -m npu_bridge.tf2``. Prints one
RESULT line."""

# The import order is what this script tests.
# isort: skip_file

from keras.layers.core import Dropout

import json
import sys

import tensorflow as tf

import npu_device  # noqa: F401

print("RESULT " + json.dumps({"same_class": Dropout is tf.keras.layers.Dropout, "argv": sys.argv[1:]}), flush=True)
