"""Profiling: an Ascend TF1 training script with profiling_mode on, and what it produces here.

Run it with `python examples/profiling.py --output /tmp/npu_profile`. The script is written as Ascend scripts
are: profiling is configured in the NpuOptimizer options of the session that initializes the NPU system
(profiling options are init options), a small CNN trains in loops of `iterations_per_loop` steps, and
`shutdown_system` ends the profile. Then:

  <output>/PROF_<time>_rank0/mindstudio_profiler_output/  op_summary, op_statistic, step_trace CSVs and the
                                                          msprof_*.json timeline (Perfetto, chrome://tracing)
  <output>/PROF_<time>_rank0/report.html                  step time per iteration, FP/BP split, top ops

and a short summary is logged. `npu-prof summary <output>` prints it again, `npu-prof report <output>` writes
the report, `npu-prof export <output> --bp-point <op>` redoes the analysis with another BP point. Add
`--ascend` to run on the simulated Ascend backend, which adds estimated Ascend 910 durations.
"""

import argparse
import json
import os
import warnings

import numpy as np

# Examples show only their own output. npu_bridge, imported before TensorFlow, hides TensorFlow's C++ start-up
# lines; TF_CPP_MIN_LOG_LEVEL=2 hides its later C++ INFO and WARNING lines (ERROR lines still show). To see them
# all: NPU_BRIDGE_TF_LOGS=1 TF_CPP_MIN_LOG_LEVEL=0 python examples/profiling.py (docs/environment.md).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Ascend scripts build their layers with tf.layers, which TensorFlow 2 marks deprecated at every call.
warnings.filterwarnings("ignore", message=r"`tf\.layers\.\w+` is deprecated", category=UserWarning)

from npu_bridge.npu_init import *  # noqa: E402,F401,F403  (tf, npu_ops, util, RewriterConfig, ...)

BATCH = 32
ITERATIONS_PER_LOOP = 5


def npu_session_config(output, ascend):
    """The session config with profiling options, as Ascend scripts write it."""
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["iterations_per_loop"].i = ITERATIONS_PER_LOOP
    custom_op.parameter_map["profiling_mode"].b = True
    custom_op.parameter_map["profiling_options"].s = tf.compat.as_bytes(
        json.dumps(
            {
                "output": output,
                "training_trace": "on",
                "task_trace": "on",
                "fp_point": "",
                "bp_point": "",
                "aic_metrics": "PipeUtilization",
            }
        )
    )
    if ascend:
        custom_op.parameter_map["device_target"].s = b"ascend"
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    return config


def cnn_train_op(images, labels):
    """Two conv layers and a classifier; returns the training op."""
    net = tf.layers.conv2d(images, 16, 3, padding="same", activation=tf.nn.relu, name="conv1")
    net = tf.layers.max_pooling2d(net, 2, 2, name="pool1")
    net = tf.layers.conv2d(net, 32, 3, padding="same", activation=tf.nn.relu, name="conv2")
    net = tf.layers.max_pooling2d(net, 2, 2, name="pool2")
    logits = tf.layers.dense(tf.layers.flatten(net), 10, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    return tf.train.MomentumOptimizer(0.01, 0.9).minimize(loss, global_step=tf.train.get_or_create_global_step())


def main():
    parser = argparse.ArgumentParser(description="Profile a small CNN the Ascend way.")
    parser.add_argument("--output", default="./npu_profile", help="profiling output directory")
    parser.add_argument("--loops", type=int, default=6, help="sess.run calls of iterations_per_loop steps")
    parser.add_argument("--ascend", action="store_true", help="use the simulated Ascend backend")
    args = parser.parse_args()
    config = npu_session_config(os.path.abspath(args.output), args.ascend)

    init_sess = tf.Session(config=config)
    init_sess.run(npu_ops.initialize_system())  # fixes the init options, profiling included

    rng = np.random.RandomState(0)
    data = (rng.rand(512, 32, 32, 3).astype(np.float32), rng.randint(0, 10, 512).astype(np.int32))
    iterator = tf.data.make_initializable_iterator(
        tf.data.Dataset.from_tensor_slices(data).repeat().batch(BATCH, drop_remainder=True)
    )
    images, labels = iterator.get_next()
    train_op = cnn_train_op(images, labels)

    loop = util.IterationPerLoop()
    train_loop = loop.create_iteration_per_loop_var(train_op)  # one sess.run = ITERATIONS_PER_LOOP steps

    with tf.Session(config=config) as sess:
        sess.run([tf.global_variables_initializer(), iterator.initializer])
        loop.load_iteration_per_loop_var(sess, ITERATIONS_PER_LOOP)
        for _ in range(args.loops):
            sess.run(train_loop)
        print(f"trained {sess.run(tf.train.get_global_step())} steps")

    init_sess.run(npu_ops.shutdown_system())
    init_sess.close()  # the profile ends with the system: summaries, timeline and report are written now


if __name__ == "__main__":
    main()
