"""Dumps one step of a small graph on every rank of a job (checked by test_dump_session)."""

import sys

from npu_bridge.npu_init import *  # noqa: F401,F403

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["enable_dump"].b = True
custom_op.parameter_map["dump_path"].s = tf.compat.as_bytes(sys.argv[1])
x = tf.placeholder(tf.float32, [2], name="x")
y = tf.multiply(x, 2.0, name="doubled")
with tf.Session(config=config) as sess:
    sess.run(y, {x: [1.0, 2.0]})
