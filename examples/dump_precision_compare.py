"""Which op goes wrong first under the Ascend backend's default precision? Dump one training step twice and
compare.

The same TF1 training step runs twice, dumping every op's outputs: once under `must_keep_origin_dtype`
(float32 everywhere, the reference) and once on the simulated Ascend backend at its default precision
(`allow_fp32_to_fp16`: matrix multiplications take fp16 inputs). The inputs are raw pixel values, as in
scripts that forget to normalize, so fp16 is pushed to its limits. Then `npu_bridge.core.dump.compare` -- the API
of `npu-dump compare` -- names the first op whose output diverges.

Run: python examples/dump_precision_compare.py [--dump-dir DIR]
The same comparison from the shell:
    npu-dump compare DIR/ascend_default DIR/must_keep_origin_dtype -o result.csv
"""

import argparse
import os
import warnings

import numpy as np

# Examples show only their own output. npu_bridge, imported before TensorFlow, hides TensorFlow's C++ start-up
# lines; TF_CPP_MIN_LOG_LEVEL=2 hides its later C++ INFO and WARNING lines (ERROR lines still show). To see them
# all: NPU_BRIDGE_TF_LOGS=1 TF_CPP_MIN_LOG_LEVEL=0 python examples/dump_precision_compare.py (docs/environment.md).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Ascend scripts build their layers with tf.layers, which TensorFlow 2 marks deprecated at every call.
warnings.filterwarnings("ignore", message=r"`tf\.layers\.\w+` is deprecated", category=UserWarning)

from npu_bridge.core import dump  # noqa: E402
from npu_bridge.core.options.table import OPTIONS  # noqa: E402
from npu_bridge.npu_init import *  # noqa: E402,F401,F403  (tf, npu_ops, RewriterConfig, ...)

RUNS = {
    "must_keep_origin_dtype": {"precision_mode": "must_keep_origin_dtype"},
    "ascend_default": {"device_target": "ascend"},  # its default precision_mode: allow_fp32_to_fp16
}


def session_config(dump_path, precision):
    """The NpuOptimizer config of an Ascend script that dumps step 0."""
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["enable_dump"].b = True
    custom_op.parameter_map["dump_path"].s = tf.compat.as_bytes(dump_path)
    custom_op.parameter_map["dump_step"].s = tf.compat.as_bytes("0")
    custom_op.parameter_map["dump_mode"].s = tf.compat.as_bytes("output")
    for key, value in precision.items():
        custom_op.parameter_map[key].s = tf.compat.as_bytes(value)
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    return config


def train_one_step(dump_path, precision):
    """Builds the model, initializes the NPU system with this run's options, runs one training step."""
    tf.reset_default_graph()
    tf.set_random_seed(0)
    rng = np.random.RandomState(0)
    images = rng.randint(0, 256, size=(32, 28 * 28)).astype(np.float32)  # raw pixels, not normalized
    labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, 32)]
    x = tf.placeholder(tf.float32, [32, 28 * 28], name="images")
    y = tf.placeholder(tf.float32, [32, 10], name="labels")
    hidden = tf.layers.dense(
        x,
        128,
        activation=tf.nn.relu,
        name="hidden",
        kernel_initializer=tf.random_normal_initializer(stddev=20.0, seed=1),  # beyond fp16: 65504
    )
    logits = tf.layers.dense(
        hidden, 10, name="logits", kernel_initializer=tf.random_normal_initializer(stddev=0.01, seed=2)
    )
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits), name="loss")
    train_op = tf.train.GradientDescentOptimizer(1e-6).minimize(loss)
    init_variables = tf.global_variables_initializer()

    config = session_config(dump_path, precision)
    init_sess = tf.Session(config=config)
    init_sess.run(npu_ops.initialize_system())  # this run's precision options become process-wide
    with tf.Session(config=config) as sess:
        sess.run(init_variables)
        _, loss_value = sess.run([train_op, loss], {x: images, y: labels})
    init_sess.run(npu_ops.shutdown_system())  # the next run initializes with its own options
    init_sess.close()
    return loss_value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump-dir", default="precision_dumps", help="where the two dumps go")
    args = parser.parse_args()

    paths = {}
    for name, precision in RUNS.items():
        paths[name] = os.path.join(os.path.abspath(args.dump_dir), name)
        os.makedirs(paths[name], exist_ok=True)
        loss_value = train_one_step(paths[name], precision)
        print(f"{name}: loss {loss_value:.6g}, dump in {paths[name]}")
    dump.flush()

    comparison = dump.compare(paths["ascend_default"], paths["must_keep_origin_dtype"])
    print(comparison.summary())
    result = os.path.join(os.path.abspath(args.dump_dir), "compare_result.csv")
    comparison.write_csv(result)
    print(f"result: {result}")
    if comparison.first_difference is None and OPTIONS["device_target"].status == "pending":
        print(
            "note: this version of npu_bridge has no simulated Ascend backend yet (device_target is accepted "
            "without effect), so both runs compute the same numbers"
        )


if __name__ == "__main__":
    main()
