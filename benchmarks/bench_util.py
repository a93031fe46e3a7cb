"""What the benchmarks share: the NpuOptimizer session config, an MLP training step, and interleaved timing."""

import statistics
import time

import numpy as np
import tensorflow as tf

from npu_bridge.core.session import config_proto

v1 = tf.compat.v1


def npu_config(**options):
    """A ConfigProto with one NpuOptimizer entry: use_off_line plus ``options`` (bool -> b, int -> i, str -> s).

    Args:
      **options: parameter_map keys and values.
    Returns:
      The ConfigProto.
    """
    config = v1.ConfigProto()
    config_proto.append_npu_optimizer(config, {"use_off_line": True, **options})
    return config


def build_mlp(batch, inputs, hidden):
    """A two-hidden-layer MLP trained by SGD on softmax cross entropy, with a fixed random batch.

    Args:
      batch: the batch size.
      inputs: the input width.
      hidden: the width of both hidden layers.
    Returns:
      (graph, train op, variable initializer, feed dict).
    """
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [batch, inputs])
        y = v1.placeholder(tf.float32, [batch, 10])
        h = v1.layers.dense(x, hidden, activation=tf.nn.relu)
        h = v1.layers.dense(h, hidden, activation=tf.nn.relu)
        logits = v1.layers.dense(h, 10)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = v1.global_variables_initializer()
    rng = np.random.RandomState(0)
    feed = {x: rng.rand(batch, inputs).astype(np.float32), y: np.eye(10, dtype=np.float32)[rng.randint(0, 10, batch)]}
    return graph, train, init, feed


def interleaved_times(runs, blocks, repeats):
    """Seconds per call of each function, one sample per block; the blocks alternate the order of the runs, so
    no function always runs first.

    Args:
      runs: {name: function of no arguments}.
      blocks: how many samples of each.
      repeats: calls per sample.
    Returns:
      {name: [seconds per call, one per block]}.
    """
    times = {name: [] for name in runs}
    for block in range(blocks):
        order = list(runs.items()) if block % 2 == 0 else list(reversed(runs.items()))
        for name, run in order:
            start = time.perf_counter()
            for _ in range(repeats):
                run()
            times[name].append((time.perf_counter() - start) / repeats)
    return times


def median_ratio(samples, baseline):
    """The median over blocks of (sample / the baseline's sample in the same block), as ``interleaved_times`` pairs
    them: load that drifts between blocks cancels out.

    Args:
      samples: one value per block.
      baseline: the baseline's value per block, in the same order.
    Returns:
      The median ratio.
    """
    return statistics.median(s / b for s, b in zip(samples, baseline))
