"""A rank that trains in a loop until npu-run's Ctrl-C (SIGINT) reaches it; run by test_launcher_interrupt.

Rank 1 prepares every batch in Python for a while (a sleep), so rank 0 mostly waits for it in the step's
allreduce: Ctrl-C finds rank 1 in Python and rank 0 inside TensorFlow, whose run then fails because rank 1 left
while rank 0's own SIGINT is pending (pybind11's "MISMATCH ... REPLACED BY KeyboardInterrupt").

argv[1] "loop": nothing catches the interrupt. "catch": the script catches KeyboardInterrupt; rank 0 then runs
one more step, whose collective fails because rank 1 has left.
"""

import os
import sys
import time

import numpy as np

from npu_bridge.npu_init import *  # noqa: F401,F403

mode = sys.argv[1]
init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank = get_rank_id()
x = tf.placeholder(tf.float32, [16, 32])
w = tf.Variable(tf.ones([32, 32]))
train = NPUDistributedOptimizer(tf.train.GradientDescentOptimizer(1e-6)).minimize(
    tf.reduce_sum(tf.square(tf.matmul(x, w)))
)


def batch():
    if rank == 1:
        time.sleep(0.2)
    return np.ones((16, 32), np.float32)


with tf.Session(config=npu_config_proto()) as sess:
    sess.run(tf.global_variables_initializer())
    step = 0
    try:
        while True:
            sess.run(train, feed_dict={x: batch()})
            step += 1
            if step == 3:
                print(f"training pid={os.getpid()}", flush=True)
    except KeyboardInterrupt:
        if mode != "catch":
            raise
        print(f"caught Ctrl-C after {step} steps", flush=True)
        if rank == 0:
            time.sleep(1)  # rank 1 has left by now
            sess.run(train, feed_dict={x: batch()})
