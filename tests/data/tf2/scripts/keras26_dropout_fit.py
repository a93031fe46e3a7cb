"""A Keras fit script whose copied npu_convert_dropout module imports Keras 2.6 paths (``keras.layers.core``,
``keras.utils.control_flow_util``, ``keras.backend``) after ``import npu_device``: the patched ``Dropout.call`` is
tf.keras' and runs in the training function. Prints one RESULT line."""

# npu_device comes before the copied module, whose Keras 2.6 imports resolve from then on.
# isort: skip_file

import json

import numpy as np
import tensorflow as tf

import npu_device
import zoo_npu_convert_dropout as npu_convert_dropout

npu_device.global_options().precision_mode = "must_keep_origin_dtype"
npu_device.open().as_default()
tf.random.set_seed(1)

rng = np.random.RandomState(0)
x = rng.normal(size=(512, 8)).astype(np.float32)
y = (x[:, :4].sum(axis=1) > 0).astype(np.float32)
model = tf.keras.Sequential(
    [tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(1)]
)
model.compile(
    optimizer=tf.keras.optimizers.Adam(0.01),
    loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
history = model.fit(x, y, batch_size=64, epochs=6, verbose=0)
inference = [model.predict(x[:16], verbose=0) for _ in range(2)]

print(
    "RESULT "
    + json.dumps(
        {
            "same_class": npu_convert_dropout.Dropout is tf.keras.layers.Dropout,
            "patched": tf.keras.layers.Dropout.call is npu_convert_dropout.dropout_call,
            "training_calls": sum(1 for t in npu_convert_dropout.CALLS if t is not None and t is not False),
            "seeds": [int(s) for s in npu_convert_dropout.SEEDS],
            "losses": history.history["loss"],
            "accuracy": history.history["accuracy"][-1],
            "inference_repeats": bool(np.array_equal(*inference)),
        }
    ),
    flush=True,
)
