"""Quickstart: a small TF1 training script written the way Ascend NPU scripts are, running here unchanged.

Run it with `python examples/quickstart.py`. It configures a session with the NpuOptimizer custom optimizer,
initializes the NPU system in its own session, asks HCCL for the world size, trains a two-layer network on
synthetic data (sharded by rank, as data-parallel Ascend scripts do) and shuts the system down.
"""

import os
import warnings

import numpy as np

# Examples show only their own output. npu_bridge, imported before TensorFlow, hides TensorFlow's C++ start-up
# lines; TF_CPP_MIN_LOG_LEVEL=2 hides its later C++ INFO and WARNING lines (ERROR lines still show). To see them
# all: NPU_BRIDGE_TF_LOGS=1 TF_CPP_MIN_LOG_LEVEL=0 python examples/quickstart.py (docs/environment.md).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Ascend scripts build their layers with tf.layers, which TensorFlow 2 marks deprecated at every call.
warnings.filterwarnings("ignore", message=r"`tf\.layers\.\w+` is deprecated", category=UserWarning)

from npu_bridge.npu_init import *  # noqa: E402,F401,F403  (tf, npu_ops, RewriterConfig, get_rank_size, ...)

STEPS = 300
BATCH = 64


def npu_session_config():
    """The session config Ascend scripts build by hand."""
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
    return config


def synthetic_data(rank_id, rank_size, n=4096, seed=0):
    """y = sin(x . w) + noise, split evenly between ranks."""
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, 8)).astype(np.float32)
    w = rng.normal(size=(8, 1)).astype(np.float32)
    y = np.sin(x @ w) + 0.01 * rng.normal(size=(n, 1)).astype(np.float32)
    return x[rank_id::rank_size], y[rank_id::rank_size]


def main():
    config = npu_session_config()

    # Ascend scripts initialize the NPU system in a session of its own, before training.
    npu_init = npu_ops.initialize_system()
    npu_shutdown = npu_ops.shutdown_system()
    init_sess = tf.Session(config=config)
    init_sess.run(npu_init)
    rank_size, rank_id = get_rank_size(), get_rank_id()
    print(f"rank {rank_id} of {rank_size}")

    x_data, y_data = synthetic_data(rank_id, rank_size)
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    hidden = tf.layers.dense(x, 32, activation=tf.nn.tanh, name="hidden")
    prediction = tf.layers.dense(hidden, 1, name="output")
    loss = tf.reduce_mean(tf.square(prediction - y))
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss)

    rng = np.random.RandomState(rank_id)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        first_loss = None
        for step in range(STEPS):
            idx = rng.randint(0, len(x_data), BATCH)
            _, loss_value = sess.run([train_op, loss], feed_dict={x: x_data[idx], y: y_data[idx]})
            first_loss = loss_value if first_loss is None else first_loss
            if step % 100 == 0 or step == STEPS - 1:
                print(f"step {step:4d}  loss {loss_value:.5f}")
        final_loss = sess.run(loss, feed_dict={x: x_data, y: y_data})
    print(f"first loss {first_loss:.5f}, final loss {final_loss:.5f}")

    init_sess.run(npu_shutdown)
    init_sess.close()


if __name__ == "__main__":
    main()
