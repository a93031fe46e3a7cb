"""An NPUEstimator training script written the way Ascend scripts are, with iterations_per_loop,
checkpoints and resume.

Run it with `python examples/npu_estimator.py --model_dir /tmp/npu_estimator_demo`. Each sess.run trains
--iterations_per_loop steps (as on the NPU), a checkpoint is written every 100 steps, and a second run of the
script (or the second phase below) resumes from the newest checkpoint in --model_dir.
"""

import argparse
import os
import warnings

import numpy as np

# Examples show only their own output. npu_bridge, imported before TensorFlow, hides TensorFlow's C++ start-up
# lines; TF_CPP_MIN_LOG_LEVEL=2 hides its later C++ INFO and WARNING lines (ERROR lines still show). To see them
# all: NPU_BRIDGE_TF_LOGS=1 TF_CPP_MIN_LOG_LEVEL=0 python examples/npu_estimator.py (docs/environment.md).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Ascend scripts build their layers with tf.layers, which TensorFlow 2 marks deprecated at every call.
warnings.filterwarnings("ignore", message=r"`tf\.layers\.\w+` is deprecated", category=UserWarning)

from npu_bridge.npu_init import *  # noqa: E402,F401,F403  (tf, NPUEstimator, NPURunConfig, NPUEstimatorSpec, ...)

FEATURES = 16


def synthetic_data(n=8192, seed=0):
    """Two-class data: the label says whether x . w > 0."""
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(n, FEATURES)).astype(np.float32)
    w = rng.normal(size=(FEATURES, 1)).astype(np.float32)
    return x, (x @ w > 0).astype(np.int32).ravel()


def make_input_fn(x, y, batch_size, training):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        if training:
            dataset = dataset.shuffle(4096, seed=1).repeat()
        # Ascend needs static shapes: drop the last partial batch, as NPU scripts do.
        return dataset.batch(batch_size, drop_remainder=True)

    return input_fn


def model_fn(features, labels, mode, params):
    hidden = tf.layers.dense(features["x"], 64, activation=tf.nn.relu, name="hidden")
    logits = tf.layers.dense(hidden, 2, name="logits")
    classes = tf.argmax(logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return NPUEstimatorSpec(mode, predictions={"class": classes, "probability": tf.nn.softmax(logits)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.train.MomentumOptimizer(params["learning_rate"], momentum=0.9)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return NPUEstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, classes)}
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model_dir", default="/tmp/npu_estimator_demo")
    parser.add_argument("--steps", type=int, default=400, help="training steps of each phase")
    parser.add_argument("--iterations_per_loop", type=int, default=10)
    parser.add_argument("--batch_size", type=int, default=64)
    args = parser.parse_args(argv)
    os.environ.setdefault("JOB_ID", "10086")  # Ascend's launchers set it; NPUEstimator requires it

    x, y = synthetic_data()
    train_input = make_input_fn(x[:7168], y[:7168], args.batch_size, training=True)
    eval_input = make_input_fn(x[7168:], y[7168:], args.batch_size, training=False)
    config = NPURunConfig(
        model_dir=args.model_dir,
        iterations_per_loop=args.iterations_per_loop,
        save_checkpoints_steps=100,
        keep_checkpoint_max=3,
        log_step_count_steps=100,
        precision_mode="allow_fp32_to_fp16",
    )

    estimator = NPUEstimator(model_fn, config=config, params={"learning_rate": 0.05})
    start = estimator.get_variable_value("global_step") if estimator.latest_checkpoint() else 0
    estimator.train(train_input, steps=args.steps)
    first = estimator.evaluate(eval_input)
    print(
        f"phase 1: global step {start} -> {first['global_step']}, accuracy {first['accuracy']:.3f}, "
        f"loss {first['loss']:.4f}"
    )

    # Resume: a new estimator on the same model_dir continues from the newest checkpoint.
    resumed = NPUEstimator(model_fn, config=config, params={"learning_rate": 0.05})
    resumed.train(train_input, steps=args.steps)
    second = resumed.evaluate(eval_input)
    print(
        f"phase 2 (resumed): global step {first['global_step']} -> {second['global_step']}, "
        f"accuracy {second['accuracy']:.3f}, loss {second['loss']:.4f}"
    )
    print(
        "checkpoints:",
        ", ".join(
            os.path.basename(p) for p in tf.train.get_checkpoint_state(args.model_dir).all_model_checkpoint_paths
        ),
    )
    prediction = next(resumed.predict(eval_input))
    print(f"first prediction: class {prediction['class']}, label {y[7168]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
