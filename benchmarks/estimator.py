"""Training speed of NPUEstimator with iterations_per_loop 1 and 10 vs a hand-written MonitoredTrainingSession
loop on the same model and input pipeline, measured in one process (the variants alternate, medians reported).

The baseline loop runs in a plain TensorFlow session. The same loop is also measured in a session with an
NpuOptimizer config, which, like the Estimator's, runs repeated fetches through TensorFlow's callables
(``npu_bridge.core.session.repeated_runs``): the Estimator's own cost is its ratio to that loop.

Steps per second are counted between the end of the warm-up runs and the end of training, so graph building,
session creation and the first (optimizing) runs are excluded; the estimators save checkpoints only at the
start and the end and log nothing, like the baseline.

Run: python benchmarks/estimator.py [--steps 2000] [--repeats 3] [--hidden 64]
"""

import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("JOB_ID", "benchmark")

import bench_util  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import npu_bridge  # noqa: E402,F401
from npu_bridge.estimator.npu.npu_config import NPURunConfig  # noqa: E402
from npu_bridge.estimator.npu.npu_estimator import NPUEstimator, NPUEstimatorSpec  # noqa: E402

v1 = tf.compat.v1
WARMUP_RUNS = 5
ESTIMATOR_1 = "NPUEstimator iterations_per_loop=1"
BRIDGED_LOOP = "same loop, NpuOptimizer session"


class StepTimer(v1.train.SessionRunHook):
    """Records the time after every run; steps/s after the warm-up runs."""

    def __init__(self, steps_per_run):
        self._steps_per_run = steps_per_run
        self.times = []

    def after_run(self, run_context, run_values):
        self.times.append(time.perf_counter())

    def steps_per_second(self):
        timed = self.times[WARMUP_RUNS - 1 :]
        return (len(timed) - 1) * self._steps_per_run / (timed[-1] - timed[0])


def input_fn(batch=32):
    rng = np.random.RandomState(0)
    x = rng.rand(4096, 32).astype(np.float32)
    y = rng.randint(0, 10, 4096).astype(np.int32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(batch)


def model_fn(features, labels, mode, params):
    hidden = v1.layers.dense(features["x"], params["hidden"], activation=tf.nn.relu)
    logits = v1.layers.dense(hidden, 10)
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = v1.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=v1.train.get_global_step())
    return NPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def monitored_session_loop(steps, hidden, config=None):
    """The baseline: what a user writes without an Estimator."""
    timer = StepTimer(1)
    with tf.Graph().as_default():
        v1.train.get_or_create_global_step()
        features, labels = v1.data.make_one_shot_iterator(input_fn()).get_next()
        spec = model_fn(features, labels, "train", {"hidden": hidden})
        hooks = [v1.train.StopAtStepHook(last_step=steps), timer]
        with v1.train.MonitoredTrainingSession(
            hooks=hooks,
            save_checkpoint_secs=None,
            save_summaries_steps=None,
            log_step_count_steps=None,
            config=config,
        ) as sess:
            while not sess.should_stop():
                sess.run(spec.train_op)
    return timer.steps_per_second()


def npu_estimator(steps, hidden, iterations_per_loop):
    timer = StepTimer(iterations_per_loop)
    with tempfile.TemporaryDirectory() as model_dir:
        config = NPURunConfig(
            model_dir=model_dir,
            iterations_per_loop=iterations_per_loop,
            save_checkpoints_steps=steps,
            log_step_count_steps=None,
        )
        estimator = NPUEstimator(model_fn, config=config, params={"hidden": hidden})
        estimator.train(input_fn, steps=steps, hooks=[timer])
    return timer.steps_per_second()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=64, help="hidden units of the MLP (bigger: less overhead)")
    args = parser.parse_args(argv)
    variants = {
        "MonitoredTrainingSession loop": lambda: monitored_session_loop(args.steps, args.hidden),
        BRIDGED_LOOP: lambda: monitored_session_loop(args.steps, args.hidden, bench_util.npu_config()),
        ESTIMATOR_1: lambda: npu_estimator(args.steps, args.hidden, 1),
        "NPUEstimator iterations_per_loop=10": lambda: npu_estimator(args.steps, args.hidden, 10),
    }
    rates = {name: [] for name in variants}
    for repeat in range(args.repeats):
        order = list(variants.items())
        for name, run in order if repeat % 2 == 0 else reversed(order):
            rates[name].append(run())
            print(f"  repeat {repeat + 1}/{args.repeats}: {name}: {rates[name][-1]:.0f} steps/s", flush=True)
    median = {name: statistics.median(values) for name, values in rates.items()}
    baseline = median["MonitoredTrainingSession loop"]
    print(f"\nsteps/s (median of {args.repeats}, {args.steps} steps, MLP 32-{args.hidden}-10, batch 32):")
    for name, rate in median.items():
        print(f"  {name:40s} {rate:8.0f}   ratio vs loop {rate / baseline:5.2f}")
    own_cost = median[ESTIMATOR_1] / median[BRIDGED_LOOP]
    print(f"  iterations_per_loop=1 vs the loop in an NpuOptimizer session: {own_cost:.2f}")
    loop_gain = median["NPUEstimator iterations_per_loop=10"] / median[ESTIMATOR_1]
    print(f"  iterations_per_loop=10 vs =1: {loop_gain:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
