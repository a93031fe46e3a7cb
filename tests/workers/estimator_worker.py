"""NPUEstimator on every rank of a job: different initial weights and data per rank, gradients averaged by
npu_distributed_optimizer_wrapper, variables broadcast from rank 0 by the hook NPUEstimator adds, and
iterations_per_loop=5. Checked by test_npu_estimator_multirank."""

import os
import sys

import numpy as np
from helpers.collectives import report

from npu_bridge.npu_init import *  # noqa: F401,F403

rank = int(os.environ["RANK_ID"])


def input_fn():
    rng = np.random.RandomState(rank)
    x = rng.rand(64, 4).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices((x, x.sum(1, keepdims=True))).repeat().batch(8)


def model_fn(features, labels, mode):
    w = tf.get_variable("w", [4, 1], initializer=tf.random_normal_initializer(seed=rank))
    loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
    optimizer = npu_distributed_optimizer_wrapper(tf.train.GradientDescentOptimizer(0.1))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_or_create_global_step())
    return NPUEstimatorSpec(mode, loss=loss, train_op=train_op)


config = NPURunConfig(
    model_dir=os.path.join(sys.argv[1], f"rank{rank}"), iterations_per_loop=5, save_checkpoints_steps=10
)
estimator = NPUEstimator(model_fn=model_fn, config=config)
estimator.train(input_fn, max_steps=10)
report("w", estimator.get_variable_value("w").ravel().tolist())
report("global_step", int(estimator.get_variable_value("global_step")))
