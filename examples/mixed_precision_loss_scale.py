"""Mixed-precision training with dynamic loss scaling, on the simulated Ascend backend.

Run it with `python examples/mixed_precision_loss_scale.py [--device-target cpu|ascend]`. The script is written the
way Ascend TF1 scripts are: it sets `precision_mode=allow_mix_precision` in the NpuOptimizer config, initializes
the NPU system first (which fixes the init options -- precision mode and backend -- for the process), and wraps
its optimizer in `NPULossScaleOptimizer` with an `ExponentialUpdateLossScaleManager`. The model uses NPU ops
(`npu_unary_ops.gelu`, `npu_aicore_ops.layer_norm`, `npu_ops.dropout`).

The loss scale starts at 2**32, so the first steps overflow fp16: on the simulated Ascend backend the fp16
values saturate and the float-status register reports the overflow (on cpu the gradients become inf); either
way those steps are skipped and the scale shrinks until training proceeds, as on an NPU.
"""

import argparse
import os
import warnings

import numpy as np

# Examples show only their own output. npu_bridge, imported before TensorFlow, hides TensorFlow's C++ start-up
# lines; TF_CPP_MIN_LOG_LEVEL=2 hides its later C++ INFO and WARNING lines (ERROR lines still show). To see them
# all: NPU_BRIDGE_TF_LOGS=1 TF_CPP_MIN_LOG_LEVEL=0 python examples/mixed_precision_loss_scale.py (docs/environment.md).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Ascend scripts build their layers with tf.layers, which TensorFlow 2 marks deprecated at every call.
warnings.filterwarnings("ignore", message=r"`tf\.layers\.\w+` is deprecated", category=UserWarning)

from npu_bridge.estimator import npu_aicore_ops  # noqa: E402
from npu_bridge.npu_init import *  # noqa: E402,F401,F403  (tf, npu_ops, NPULossScaleOptimizer, ...)

STEPS = 200
BATCH = 64


def session_config(device_target):
    """The NpuOptimizer config of this script (device_target is npu_bridge's extension; upstream ignores it)."""
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    custom_op.parameter_map["device_target"].s = tf.compat.as_bytes(device_target)
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    return config


def model(x, keep_prob):
    """A small MLP with NPU activation, normalization and dropout ops; returns logits."""
    hidden = tf.layers.dense(x, 128, name="hidden")
    hidden, _, _ = npu_aicore_ops.layer_norm(
        hidden, tf.ones([128]), tf.zeros([128]), begin_norm_axis=1, begin_params_axis=1
    )
    hidden = npu_ops.dropout(npu_unary_ops.gelu(hidden), keep_prob)
    return tf.layers.dense(hidden, 4, name="logits")


def synthetic_data(n=2048, seed=0):
    """Four Gaussian clusters in 16 dimensions."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 4, n)
    centers = rng.normal(scale=2.0, size=(4, 16))
    return (centers[labels] + rng.normal(size=(n, 16))).astype(np.float32), labels


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device-target", default="ascend", choices=["cpu", "ascend"])
    args = parser.parse_args(argv)
    config = session_config(args.device_target)

    init_sess = tf.Session(config=config)
    init_sess.run(npu_ops.initialize_system())

    x_data, y_data = synthetic_data()
    x = tf.placeholder(tf.float32, [None, 16])
    y = tf.placeholder(tf.int32, [None])
    keep_prob = tf.placeholder_with_default(1.0, [])
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=model(x, keep_prob)))
    manager = ExponentialUpdateLossScaleManager(
        init_loss_scale=2**32, incr_every_n_steps=100, decr_every_n_nan_or_inf=1, decr_ratio=0.5
    )
    global_step = tf.train.get_or_create_global_step()
    train_op = NPULossScaleOptimizer(tf.train.MomentumOptimizer(0.05, 0.9), manager).minimize(
        loss, global_step=global_step
    )

    rng = np.random.RandomState(1)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        first_loss = sess.run(loss, {x: x_data, y: y_data})
        for step in range(STEPS):
            idx = rng.randint(0, len(x_data), BATCH)
            sess.run(train_op, {x: x_data[idx], y: y_data[idx], keep_prob: 0.9})
            if step % 50 == 0 or step == STEPS - 1:
                scale, applied = sess.run([manager.get_loss_scale(), global_step])
                print(f"step {step:3d}  loss scale {scale:.6g}  applied steps {applied}")
        final_loss, applied = sess.run([loss, global_step], {x: x_data, y: y_data})
    print(f"skipped {STEPS - applied} overflowing steps; first loss {first_loss:.4f}, final loss {final_loss:.4f}")

    init_sess.run(npu_ops.shutdown_system())
    init_sess.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
