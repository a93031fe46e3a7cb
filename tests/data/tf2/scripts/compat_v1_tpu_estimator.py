"""A TF1 script behind ``compat.enable_v1()`` that builds its Estimator as the BERT / RoBERTa ``run_classifier``
does, from ``tf.compat.v1.estimator.tpu`` with ``use_tpu=False``, and trains it. Prints one RESULT line."""

import json
import os

import numpy as np
import tensorflow as tf

import npu_device

npu_device.compat.enable_v1()

FEATURES = np.random.RandomState(0).rand(64, 4).astype(np.float32)
LABELS = FEATURES @ np.array([[1.0], [-1.0], [2.0], [0.5]], np.float32)


def input_fn(params):
    data = tf.compat.v1.data.Dataset.from_tensor_slices((FEATURES, LABELS))
    return data.repeat().batch(params["batch_size"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    predictions = tf.compat.v1.layers.dense(features, 1)
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op, scaffold_fn=None)


is_per_host = tf.compat.v1.estimator.tpu.InputPipelineConfig.PER_HOST_V2
run_config = tf.compat.v1.estimator.tpu.RunConfig(
    master=None,
    model_dir=os.path.join(os.getcwd(), "model"),
    save_checkpoints_steps=10,
    tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(
        iterations_per_loop=10, num_shards=8, per_host_input_for_training=is_per_host
    ),
)
estimator = tf.compat.v1.estimator.tpu.TPUEstimator(
    use_tpu=False, model_fn=model_fn, config=run_config, train_batch_size=16, eval_batch_size=16
)
estimator.train(input_fn=input_fn, max_steps=20)
metrics = estimator.evaluate(input_fn=input_fn, steps=2)
print(
    "RESULT "
    + json.dumps(
        {
            "estimator": f"{type(estimator).__module__}.{type(estimator).__name__}",
            "global_step": int(metrics["global_step"]),
            "loss": float(metrics["loss"]),
            "start_loss": float(np.mean(LABELS**2)),
        }
    ),
    flush=True,
)
