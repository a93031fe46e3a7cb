"""One rank of the two-host job of tests/launch/test_two_hosts.py: collectives, data-parallel training, then a loop
of allreduces that only ends when the job breaks.

Reports the world and the collective servers' addresses, allreduce / allgather / broadcast results and the
collective op types an allreduce, an allgather and a broadcast ran through, the
training's data and weights, and how long each phase took. Then it prints "looping" and runs an allreduce
every 50 ms: when another host goes away, the collective fails, the rank reports the error with the
monotonic time and exits with code 1. A rank that sees no failure within --loop-seconds exits with code 3.
"""

import argparse
import sys
import time

import numpy as np
from helpers.collectives import collective_op_types, report, vector

from npu_bridge.core.collectives import server
from npu_bridge.core.runtime.errors import CollectiveError
from npu_bridge.core.world import world
from npu_bridge.estimator.npu.npu_hook import broadcast_global_variables
from npu_bridge.npu_init import *  # noqa: F401,F403

FEATURES, SAMPLES, STEPS, LEARNING_RATE = 3, 4, 5, 0.1

parser = argparse.ArgumentParser()
parser.add_argument("--loop-seconds", type=float, default=120.0)
args = parser.parse_args()

init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank, size = get_rank_id(), get_rank_size()
report("world", [rank, size, get_local_rank_id(), get_local_rank_size()])
report("addresses", server.addresses_of(world.current_world()))

# Collectives: every rank's input differs; the broadcast root is on the other host than rank 0.
with tf.Graph().as_default():
    x = tf.constant(vector(rank))
    fetches = {
        "allreduce_sum": hccl_ops.allreduce(x, "sum"),
        "allreduce_max": hccl_ops.allreduce(x, "max"),
        "allgather": hccl_ops.allgather(tf.reshape(x, [1, 6]), size),
        "broadcast": hccl_ops.broadcast([x], root_rank=size - 1)[0],
        "allreduce_odd": hccl_ops.allreduce(tf.range(7.0) * (rank + 1), "sum"),  # a length no host count divides
    }
    report("allreduce_ops", collective_op_types(fetches["allreduce_sum"]))
    report("allgather_ops", collective_op_types(fetches["allgather"]))
    report("broadcast_ops", collective_op_types(fetches["broadcast"]))
    with tf.Session(config=npu_config_proto()) as sess:
        started = time.monotonic()
        for name, value in sess.run(fetches).items():
            report(name, value)
        report("collectives_seconds", time.monotonic() - started)

# Data-parallel training: own initial weights and data per rank; the broadcast makes rank 0's weights everyone's,
# NPUDistributedOptimizer averages the gradients.
with tf.Graph().as_default():
    rng = np.random.RandomState(rank)
    features = rng.normal(size=(SAMPLES, FEATURES)).astype(np.float32)
    labels = rng.normal(size=(SAMPLES, 1)).astype(np.float32)
    kernel = tf.Variable(rng.normal(size=(FEATURES, 1)).astype(np.float32))
    bias = tf.Variable(rng.normal(size=(1,)).astype(np.float32))
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(features), kernel) + bias - tf.constant(labels)))
    train = NPUDistributedOptimizer(tf.train.GradientDescentOptimizer(LEARNING_RATE)).minimize(loss)
    with tf.Session(config=npu_config_proto()) as sess:
        started = time.monotonic()
        sess.run(tf.global_variables_initializer())
        report("initial", [v.tolist() for v in sess.run([kernel, bias])])
        sess.run(broadcast_global_variables(0))
        for _ in range(STEPS):
            sess.run(train)
        report("trained", [v.tolist() for v in sess.run([kernel, bias])])
        report("data", [features.tolist(), labels.tolist()])
        report("training_seconds", time.monotonic() - started)

# Until the job breaks.
total = hccl_ops.allreduce(tf.ones([16]) * (rank + 1), "sum")
sess = tf.Session(config=npu_config_proto())
sess.run(total)
report("looping", time.monotonic())
deadline = time.monotonic() + args.loop_seconds
while time.monotonic() < deadline:
    try:
        sess.run(total)
    except CollectiveError as error:
        report("failed_at", time.monotonic())
        report("error", str(error))
        sys.exit(1)
    time.sleep(0.05)
sys.exit(3)
