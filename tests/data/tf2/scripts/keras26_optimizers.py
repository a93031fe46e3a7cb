"""``tf.keras.optimizers.Adam`` and friends are Keras 2.6's OptimizerV2 classes for the script: a Transformer-style
learning-rate schedule (``rsqrt(step)``) gets a float step in ``fit`` and in a custom loop with
``NpuLossScaleOptimizer``, while an installed package (``optimizer_library`` on PYTHONPATH, in a site-packages
directory) keeps tf_keras 2.21's optimizers. Prints one RESULT line."""

# Keras imports come after npu_device, which selects tf_keras for tensorflow.keras, as in the zoo's scripts.
# isort: skip_file

import json

import numpy as np
import tensorflow as tf

import npu_device
import optimizer_library  # installed: site-packages
from npu_device.train.optimizer import NpuLossScaleOptimizer
from tensorflow.keras import optimizers
from tensorflow.keras.optimizers import Adam

npu_device.open().as_default()
tf.keras.utils.set_random_seed(0)

step_dtypes = set()


class InverseSqrtSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
    """The schedule of the zoo's Transformer scripts."""

    def __init__(self, warmup_steps=4):
        super().__init__()
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step_dtypes.add(step.dtype.name)
        return 0.1 * tf.math.minimum(tf.math.rsqrt(step + 1), (step + 1) * self.warmup_steps**-1.5)


rng = np.random.RandomState(0)
x = rng.rand(64, 4).astype(np.float32)
y = x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)

model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
adam = tf.keras.optimizers.Adam(InverseSqrtSchedule())
model.compile(optimizer=adam, loss="mse")
fit_losses = model.fit(x, y, batch_size=16, epochs=8, verbose=0).history["loss"]

loop_model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
scaled = NpuLossScaleOptimizer(tf.keras.optimizers.SGD(InverseSqrtSchedule()), dynamic=True, initial_scale=64)


@tf.function
def train_step(features, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(loop_model(features) - labels))
        scaled_loss = scaled.get_scaled_loss(loss)
    grads = scaled.get_unscaled_gradients(tape.gradient(scaled_loss, loop_model.trainable_variables))
    scaled.apply_gradients(zip(grads, loop_model.trainable_variables))
    return loss


loop_losses = [float(train_step(x, y)) for _ in range(20)]

compiled = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
compiled.compile(optimizer="adam", loss="mse")


def where(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


print(
    "RESULT "
    + json.dumps(
        {
            "tf.keras.optimizers.Adam": where(tf.keras.optimizers.Adam),
            "tf.optimizers.SGD": where(tf.optimizers.SGD),
            "from tensorflow.keras.optimizers import Adam": where(Adam),
            "from tensorflow.keras import optimizers; optimizers.RMSprop": where(optimizers.RMSprop),
            "tf.keras.optimizers.get('sgd')": where(type(tf.keras.optimizers.get("sgd"))),
            "compile(optimizer='adam')": where(type(compiled.optimizer)),
            "experimental.Adam": where(tf.keras.optimizers.experimental.Adam),
            "isinstance Optimizer": isinstance(adam, tf.keras.optimizers.Optimizer),
            "isinstance LossScaleOptimizer": isinstance(scaled, tf.keras.mixed_precision.LossScaleOptimizer),
            "step_dtypes": sorted(step_dtypes),
            "fit_losses": fit_losses,
            "loop_losses": loop_losses,
            "library": where(type(optimizer_library.make())),
        }
    ),
    flush=True,
)
