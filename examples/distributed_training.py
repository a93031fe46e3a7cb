"""Data-parallel training, written the way Ascend NPU scripts are: one process per rank.

Run it on 2 ranks with the launcher (each rank trains on its half of every global batch; gradients are
averaged over the ranks, so the result equals one process training on the whole batch):

    npu-run -n 2 -- python examples/distributed_training.py --steps 20 --output /tmp/weights.npz

or as one process: `python examples/distributed_training.py`. Rank 0 prints the loss and writes the final
weights to --output.

What it shows: `initialize_system` in a session of its own (which also waits for every rank),
`get_rank_size()` / `get_rank_id()` to shard the data, `NPUDistributedOptimizer` (gradients averaged over
the ranks with fused allreduces), `npu_allreduce` (the loss of the global batch), and `npu_hooks_append` (its
`NPUBroadcastGlobalVariablesHook` makes every
rank start from rank 0's initial weights, although each rank initializes with its own seed here).
"""

import argparse
import os
import warnings

import numpy as np

# Examples show only their own output. npu_bridge, imported before TensorFlow, hides TensorFlow's C++ start-up
# lines; TF_CPP_MIN_LOG_LEVEL=2 hides its later C++ INFO and WARNING lines (ERROR lines still show). To see them
# all: NPU_BRIDGE_TF_LOGS=1 TF_CPP_MIN_LOG_LEVEL=0 python examples/distributed_training.py (docs/environment.md).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Ascend scripts build their layers with tf.layers, which TensorFlow 2 marks deprecated at every call.
warnings.filterwarnings("ignore", message=r"`tf\.layers\.\w+` is deprecated", category=UserWarning)

from npu_bridge.npu_init import *  # noqa: E402,F401,F403  (tf, npu_ops, get_rank_size, NPUDistributedOptimizer, ...)

FEATURES = 16


def global_batch(step, batch_size):
    """The same global batch on every rank (and in a one-process run): y = tanh(x . w) + noise."""
    rng = np.random.RandomState(1000 + step)
    x = rng.normal(size=(batch_size, FEATURES)).astype(np.float32)
    w = np.linspace(-1.0, 1.0, FEATURES, dtype=np.float32)[:, None]
    y = np.tanh(x @ w) + 0.05 * rng.normal(size=(batch_size, 1)).astype(np.float32)
    return x, y


def build_model(rank_id, learning_rate):
    """A two-layer network; its initial weights depend on the rank (the broadcast hook fixes that)."""
    x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    hidden = tf.layers.dense(
        x, 32, activation=tf.nn.relu, name="hidden", kernel_initializer=tf.glorot_uniform_initializer(seed=2 * rank_id)
    )
    prediction = tf.layers.dense(
        hidden, 1, name="out", kernel_initializer=tf.glorot_uniform_initializer(seed=2 * rank_id + 1)
    )
    loss = tf.reduce_mean(tf.square(prediction - y))
    optimizer = NPUDistributedOptimizer(tf.train.GradientDescentOptimizer(learning_rate))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_or_create_global_step())
    return x, y, npu_allreduce(loss), train_op  # the loss averaged over the ranks: the global batch's loss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32, help="global batch size (split between the ranks)")
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--output", help="where rank 0 writes the final weights (.npz)")
    args = parser.parse_args()

    init_sess = tf.Session(config=npu_config_proto())
    init_sess.run(npu_ops.initialize_system())
    rank_size, rank_id = get_rank_size(), get_rank_id()
    if args.batch % rank_size:
        raise SystemExit(f"--batch {args.batch} must be a multiple of the number of ranks ({rank_size})")
    local = args.batch // rank_size
    print(f"rank {rank_id} of {rank_size}: {local} of {args.batch} samples per step")

    x, y, loss, train_op = build_model(rank_id, args.learning_rate)
    with tf.train.MonitoredTrainingSession(hooks=npu_hooks_append(), config=npu_config_proto()) as sess:
        for step in range(args.steps):
            features, labels = global_batch(step, args.batch)
            mine = slice(rank_id * local, (rank_id + 1) * local)
            _, loss_value = sess.run([train_op, loss], {x: features[mine], y: labels[mine]})
            if rank_id == 0 and (step % 5 == 0 or step == args.steps - 1):
                print(f"step {step}: loss {loss_value:.5f}")
        variables = tf.trainable_variables()
        weights = dict(zip([v.op.name for v in variables], sess.run(variables)))
    if rank_id == 0 and args.output:
        np.savez(args.output, **weights)
        print(f"wrote {len(weights)} weight arrays to {args.output}")
    init_sess.run(npu_ops.shutdown_system())
    init_sess.close()


if __name__ == "__main__":
    main()
