"""Trains 4 steps with allreduced gradients, dumping every op on every rank; in step 2 rank 1 alone feeds a negative
value, whose log is NaN, before the gradients are allreduced (checked by test_dump_rank_origin).

Usage: dump_origin_worker.py DUMP_PATH [clean]   (clean: no rank feeds a negative value)
"""

import sys

import numpy as np
from helpers.collectives import report

from npu_bridge.npu_init import *  # noqa: F401,F403

STEPS, BAD_STEP, BAD_RANK = 4, 2, 1

init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank = get_rank_id()

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["enable_dump"].b = True
custom_op.parameter_map["dump_path"].s = tf.compat.as_bytes(sys.argv[1])
custom_op.parameter_map["dump_step"].s = tf.compat.as_bytes(f"0-{STEPS - 1}")
custom_op.parameter_map["dump_mode"].s = tf.compat.as_bytes("all")

x = tf.placeholder(tf.float32, [4], name="x")
w = tf.Variable(np.ones(4, np.float32), name="w")
features = tf.math.log(x, name="features")  # NaN where x < 0
loss = tf.reduce_sum(features * w, name="loss")
train = NPUDistributedOptimizer(tf.train.GradientDescentOptimizer(0.1)).minimize(loss)
losses = []
with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        value = np.arange(1.0, 5.0, dtype=np.float32) * (rank + 1)
        if step == BAD_STEP and rank == BAD_RANK and sys.argv[2:] != ["clean"]:
            value[1] = -1.0
        losses.append(float(sess.run([loss, train], {x: value})[0]))
report("losses", losses)
