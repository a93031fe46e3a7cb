"""Trains a small model with averaged gradients (NPUDistributedOptimizer) and profiling on, on every rank of a
job (checked by test_profiling_cli)."""

import json
import sys

from npu_bridge.npu_init import *  # noqa: F401,F403

x = tf.placeholder(tf.float32, [4, 8])
loss = tf.reduce_sum(tf.layers.dense(x, 2, name="dense"))
train_op = NPUDistributedOptimizer(tf.train.GradientDescentOptimizer(0.1)).minimize(loss)
config = npu_config_proto()
custom_op = config.graph_options.rewrite_options.custom_optimizers[0]
custom_op.parameter_map["profiling_mode"].b = True
custom_op.parameter_map["profiling_options"].s = json.dumps(
    {"output": sys.argv[1], "training_trace": "on", "task_trace": "on"}
).encode()
with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train_op, {x: [[1.0] * 8] * 4})
