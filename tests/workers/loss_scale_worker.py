"""Loss scaling on every rank of a job (backend from NPU_BRIDGE_DEVICE_TARGET): rank 1's gradients overflow
at step 1 only. Reports each run's weights and loss scale after every step; checked by
test_loss_scale_multirank."""

import numpy as np
from helpers.collectives import report

from npu_bridge.npu_init import *  # noqa: F401,F403

init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank = get_rank_id()
OVERFLOW_STEP = 1


def train(name, wrap, steps=3):
    """Three SGD steps of a one-weight model; reports the weight and loss scale after every step."""
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name=f"{name}_w")
        x = tf.placeholder(tf.float32, [2])
        loss = tf.reduce_sum(w * x)
        manager = ExponentialUpdateLossScaleManager(
            init_loss_scale=1024, incr_every_n_steps=100, decr_every_n_nan_or_inf=1, decr_ratio=0.5
        )
        optimizer = wrap(tf.train.GradientDescentOptimizer(0.1), manager)
        train_op = optimizer.minimize(loss)
        history = []
        with tf.Session(config=npu_config_proto()) as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(steps):
                value = np.inf if (rank == 1 and step == OVERFLOW_STEP) else rank + 1.0
                sess.run(train_op, {x: [value, value]})
                history.append([sess.run(w).tolist(), float(sess.run(manager.get_loss_scale()))])
        report(name, history)


train("distributed_status", lambda opt, m: NPULossScaleOptimizer(opt, m, is_distributed=True))
train("local_status", lambda opt, m: NPULossScaleOptimizer(opt, m, is_distributed=False))
# As Ascend scripts write it: averaged gradients inside, loss scaling outside.
train("averaged", lambda opt, m: NPULossScaleOptimizer(NPUDistributedOptimizer(opt), m, is_distributed=True))
train("npu_optimizer", lambda opt, m: NPUOptimizer(opt, m, is_distributed=True, is_loss_scale=True))
