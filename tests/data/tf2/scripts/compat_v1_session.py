"""A TF1 script on the TF2 adapter: compat.enable_v1(), the TF1 API from npu_device.compat.v1.npu_init, and an
NpuOptimizer session. Prints one RESULT line."""

import json

import numpy as np
import tensorflow as tf
from npu_device.compat.v1.npu_init import *  # noqa: F403

import npu_device

npu_device.compat.enable_v1()

features = np.random.RandomState(0).rand(32, 4).astype(np.float32)
x = tf.compat.v1.placeholder(tf.float32, [None, 4])
w = tf.compat.v1.get_variable("w", [4, 1], initializer=tf.compat.v1.ones_initializer())
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
train = npu_distributed_optimizer_wrapper(tf.compat.v1.train.GradientDescentOptimizer(0.1)).minimize(loss)  # noqa: F405
config = tf.compat.v1.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF  # noqa: F405
with tf.compat.v1.Session(config=config) as sess:
    sess.run(tf.compat.v1.global_variables_initializer())
    losses = [float(sess.run([train, loss], {x: features})[1]) for _ in range(10)]
print("RESULT " + json.dumps({"losses": losses, "bridged": sess._npu_bridge_options is not None}), flush=True)
