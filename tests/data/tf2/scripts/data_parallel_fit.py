"""Data-parallel Keras training written the way the zoo's TF2 scripts write it: the world size from RANK_SIZE,
shard_and_rebatch_dataset, broadcast of the initial weights from rank 0 (each rank initializes its own), the
distributed Keras optimizer wrapper, fit; then an eager all_reduce of a NumPy value (the BERT scripts' metrics).
Prints RESULT lines (helpers.collectives.report)."""

import os

import numpy as np
import tensorflow as tf
from helpers.collectives import report

import npu_device

npu_device.global_options().precision_mode = "must_keep_origin_dtype"
npu_device.open().as_default()
rank_size = int(os.environ.get("RANK_SIZE", "1"))
rank = npu_device.global_npu_ctx().worker_id

rng = np.random.RandomState(0)
features = rng.rand(64, 8).astype(np.float32)
targets = (features @ rng.rand(8, 1)).astype(np.float32)
dataset = tf.data.Dataset.from_tensor_slices((features, targets))
dataset, batch_size = npu_device.distribute.shard_and_rebatch_dataset(dataset, 16)
dataset = dataset.batch(batch_size, drop_remainder=True)

tf.keras.utils.set_random_seed(rank)  # every rank starts from its own weights: the broadcast makes them equal
model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh"), tf.keras.layers.Dense(1)])
model.build((None, 8))
if rank_size != 1:
    npu_device.distribute.broadcast(model.trainable_variables, root_rank=0)
report("initial", [v.numpy().ravel().tolist() for v in model.trainable_variables])
optimizer = npu_device.distribute.npu_distributed_keras_optimizer_wrapper(tf.keras.optimizers.SGD(0.1))
model.compile(optimizer=optimizer, loss="mse")
history = model.fit(dataset, epochs=3, verbose=0, shuffle=False)
report("batch_size", batch_size)
report("losses", history.history["loss"])
report("weights", [v.numpy().ravel().tolist() for v in model.trainable_variables])
# With one rank all_reduce returns its input as given (here a NumPy array), as the adapter's does.
report("metric_sum", np.asarray(npu_device.distribute.all_reduce(np.array([rank + 1.0], np.float32), "sum")))
report("metric_mean", np.asarray(npu_device.distribute.all_reduce([np.array([rank + 1.0], np.float32)], "mean")[0]))
