"""A TF 2.4-era script: Keras from ``tensorflow.python.keras`` (an LSTM), the Keras 2.6 optimizer from
``keras.optimizer_v2``, and TensorFlow internals that moved or vanished (``ops.Tensor``,
``ops.convert_to_tensor_v2``, ``training_ops``, ``distribution_strategy_context``, ``tensorflow.python.eager.profiler``,
``Graph._last_id``). It trains with ``fit`` after ``npu_device.open().as_default()``. Argument: a log directory for
the profile. Prints one RESULT line."""

# npu_device comes before the Keras 2.6 and TensorFlow-internal imports it maps.
# isort: skip_file

import json
import os
import sys

import numpy as np
import tensorflow as tf

import npu_device
from keras.engine import keras_tensor
from keras.optimizer_v2 import adam
from tensorflow.python.distribute import distribution_strategy_context
from tensorflow.python.eager import profiler
from tensorflow.python.framework import ops
from tensorflow.python.keras import backend
from tensorflow.python.keras.layers import LSTM, Dense
from tensorflow.python.keras.mixed_precision import loss_scale_optimizer
from tensorflow.python.keras.utils.generic_utils import deserialize_keras_object, get_custom_objects, to_list
from tensorflow.python.profiler import model_analyzer, option_builder, profiler_v2, trace
from tensorflow.python.training import training_ops

npu_device.open().as_default()

rng = np.random.RandomState(0)
x = rng.uniform(-1, 1, size=(256, 6, 3)).astype(np.float32)
y = x[:, :, 0].sum(axis=1, keepdims=True)
model = tf.keras.Sequential([LSTM(16, input_shape=(6, 3)), Dense(1)])
model.compile(optimizer=loss_scale_optimizer.LossScaleOptimizer(adam.Adam(0.02)), loss="mse")

profiler.start()
history = model.fit(x, y, batch_size=32, epochs=8, verbose=0)
trace_file = profiler.save(sys.argv[1], profiler.stop())

variable = tf.Variable([1.0, 2.0])


@tf.function
def sgd_step(gradient):
    checked = isinstance(gradient, ops.Tensor)
    training_ops.resource_apply_gradient_descent(variable.handle, ops.convert_to_tensor_v2(0.5), gradient)
    return checked


graph = tf.Graph()
with graph.as_default():
    before = graph._last_id
    tf.constant(1.0) + tf.constant(2.0)
    after = graph._last_id

print(
    "RESULT "
    + json.dumps(
        {
            "lstm": LSTM is tf.keras.layers.LSTM,
            "backend": backend.floatx(),
            "optimizer_v2": type(model.optimizer.inner_optimizer).__module__,
            "loss_scale_optimizer": isinstance(model.optimizer, tf.keras.mixed_precision.LossScaleOptimizer),
            "keras_tensor": keras_tensor.KerasTensor.__module__,
            # Keras 2.6's generic_utils names, moved to tf_keras' saving modules (a custom loss copied from Keras)
            "generic_utils": [
                type(
                    deserialize_keras_object({"class_name": "Dense", "config": {"units": 2}}, tf.keras.layers.__dict__)
                )
                is tf.keras.layers.Dense,
                isinstance(get_custom_objects(), dict),
                to_list(3),
            ],
            "losses": history.history["loss"],
            "tensor_in_function": bool(sgd_step(tf.constant([1.0, 1.0]))),
            "variable": variable.numpy().tolist(),
            "strategy": distribution_strategy_context.get_strategy() is tf.distribute.get_strategy(),
            "last_id": [before, after],
            "profile": os.path.getsize(trace_file) > 0,
            "profiler_names": all(
                hasattr(module, name)
                for module, name in [
                    (profiler_v2, "start"),
                    (profiler_v2, "stop"),
                    (trace, "Trace"),
                    (model_analyzer, "profile"),
                    (option_builder, "ProfileOptionBuilder"),
                ]
            ),
        }
    ),
    flush=True,
)
