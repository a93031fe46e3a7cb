"""Keras 2.6's ``fit`` / ``evaluate`` / ``predict`` gave a model 1-D inputs as ``(batch, 1)``: a functional model on
``Input(shape=(1,))``, a subclassed model and a ``Sequential`` built by its first batch, each fed 1-D numpy arrays
of x and y. Prints one RESULT line."""

import json

import numpy as np
import tensorflow as tf

import npu_device

npu_device.open().as_default()

x = np.linspace(-1.0, 1.0, 64).astype(np.float32)  # shape (64,)
y = 3.0 * x * x - x  # shape (64,)


class Quadratic(tf.keras.Model):
    """Features x and x**2 side by side: needs x as (batch, 1)."""

    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)

    def call(self, inputs):
        return self.dense(tf.concat([inputs, tf.square(inputs)], axis=1))


def functional():
    inputs = tf.keras.Input(shape=(1,))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(tf.concat([inputs, tf.square(inputs)], axis=1)))


def sequential():
    return tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh"), tf.keras.layers.Dense(1)])


results = {}
for name, build in (("functional", functional), ("subclassed", Quadratic), ("sequential", sequential)):
    tf.keras.utils.set_random_seed(0)
    model = build()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"])
    try:
        losses = model.fit(x, y, batch_size=16, epochs=20, verbose=0).history["loss"]
        results[name] = {
            "losses": [losses[0], losses[-1]],
            "evaluate": model.evaluate(x, y, verbose=0),
            "predict_shape": list(model.predict(x, verbose=0).shape),
            "train_on_batch": float(model.train_on_batch(x[:8], y[:8])[0]),
            "predict_on_batch_shape": list(np.asarray(model.predict_on_batch(x[:8])).shape),
        }
    except Exception as error:  # what today's Keras raised, for the test's message
        results[name] = {"error": f"{type(error).__name__}: {str(error)[:300]}"}

print("RESULT " + json.dumps(results), flush=True)
