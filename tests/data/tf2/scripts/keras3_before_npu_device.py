"""``import keras`` before ``import npu_device`` keeps Keras 3 in the script (npu_device says so); the Keras imports
after it get tf_keras. Prints one RESULT line."""

# The import order is what this script tests.
# isort: skip_file

import json

import keras

import npu_device  # noqa: F401
from keras.layers import Dense

print("RESULT " + json.dumps({"early": keras.__version__, "later": Dense.__module__}), flush=True)
