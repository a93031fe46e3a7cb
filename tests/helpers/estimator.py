"""A small linear-regression model for the Estimator tests: y = x . [1, 2, -1, 0.5] on generated data."""

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
WEIGHTS = np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)
X = np.random.RandomState(0).rand(64, 4).astype(np.float32)
Y = X @ WEIGHTS


def input_fn(batch_size=8, repeat=True):
    """A Dataset of ({"x": [batch, 4]}, [batch, 1]) in a fixed order."""
    dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
    return (dataset.repeat() if repeat else dataset).batch(batch_size)


def eval_input_fn():
    """The whole data set once."""
    return input_fn(repeat=False)


def model_fn(features, labels, mode, params):
    """Linear model with zero-initialized weights; "lr" in params; the spec class is params["spec"]."""
    spec = params.get("spec", tf.estimator.EstimatorSpec)
    kernel = v1.get_variable("kernel", [4, 1], initializer=v1.zeros_initializer())
    predictions = tf.matmul(features["x"], kernel)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return spec(mode, predictions={"y": predictions})
    loss = v1.losses.mean_squared_error(labels, predictions)
    train_op = v1.train.GradientDescentOptimizer(params.get("lr", 0.1)).minimize(
        loss, global_step=v1.train.get_global_step()
    )
    return spec(
        mode, loss=loss, train_op=train_op, eval_metric_ops={"mae": v1.metrics.mean_absolute_error(labels, predictions)}
    )


def numpy_training(*runs, lr=0.1, batch_size=8):
    """The same training in numpy: the kernel after train() calls of ``runs`` steps each.

    Each call restarts the input at the first batch, as an Estimator's input_fn does.
    """
    kernel = np.zeros((4, 1), np.float32)
    for steps in runs:
        for step in range(steps):
            start = (step * batch_size) % len(X)
            x, y = X[start : start + batch_size], Y[start : start + batch_size]
            kernel -= lr * (2.0 / len(x)) * x.T @ (x @ kernel - y)
    return kernel
