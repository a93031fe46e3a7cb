"""Trains the graph shapes real Ascend scripts build under every precision mode, with and without overflow
detection and dump, on one backend (device_target is an init option: one backend per process).

Usage: crash_matrix_worker.py BACKEND WORK_DIR. Prints one JSON line per combination:
{"mode", "instrumentation", "losses_before", "losses_after", "matmul_error"}; the test judges them.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

from npu_bridge.core.runtime import system
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu.npu_dynamic_rnn import DynamicRNN

v1 = tf.compat.v1
v1.disable_eager_execution()

MODES = (
    ("precision_mode", None),
    ("precision_mode", "force_fp32"),
    ("precision_mode", "allow_fp32_to_fp16"),
    ("precision_mode", "force_fp16"),
    ("precision_mode", "must_keep_origin_dtype"),
    ("precision_mode", "allow_mix_precision"),
    ("precision_mode", "cube_fp16in_fp32out"),
    ("precision_mode", "allow_mix_precision_fp16"),
    ("precision_mode", "allow_mix_precision_bf16"),
    ("precision_mode", "allow_fp32_to_bf16"),
    ("precision_mode_v2", "fp16"),
    ("precision_mode_v2", "origin"),
    ("precision_mode_v2", "cube_fp16in_fp32out"),
    ("precision_mode_v2", "mixed_float16"),
    ("precision_mode_v2", "mixed_bfloat16"),
)
INSTRUMENTATION = ("plain", "overflow", "dump")
# Overflow detection and dump run with one mode of each kind of rewrite the precision pass makes (unset, none,
# everything fp16, mixed fp16, cube fp16-in fp32-out, mixed bf16, the v2 spelling): each pair of (rewrite,
# instrumentation) is covered, at 29 sessions instead of 45. The rewrites are the same pass on either backend, so
# the cpu backend instruments two of them (unset: no rewrite there; mixed fp16), at 19 sessions.
INSTRUMENTED_MODES = (
    ("precision_mode", None),
    ("precision_mode", "force_fp32"),
    ("precision_mode", "force_fp16"),
    ("precision_mode", "allow_mix_precision"),
    ("precision_mode", "cube_fp16in_fp32out"),
    ("precision_mode", "allow_mix_precision_bf16"),
    ("precision_mode_v2", "mixed_float16"),
)
INSTRUMENTED_MODES_CPU = (("precision_mode", None), ("precision_mode", "allow_mix_precision"))
RNG = np.random.RandomState(0)
FEATURES = RNG.rand(32, 20).astype(np.float32)


def dense_classifier(keep_prob):
    """Dense softmax classifier with npu_ops.dropout (keep_prob an unshaped placeholder), dense labels."""
    labels = np.eye(4, dtype=np.float32)[RNG.randint(0, 4, 32)]
    hidden = tf.nn.relu(v1.layers.dense(tf.constant(FEATURES), 16, name="classifier_hidden"))
    logits = v1.layers.dense(npu_ops.dropout(hidden, keep_prob), 4, name="classifier_logits")
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    return loss, hidden.op.inputs[0].op.inputs[0]  # the first MatMul (Relu <- BiasAdd <- MatMul)


def conv_net(training):
    images = tf.constant(RNG.rand(8, 8, 8, 3).astype(np.float32))
    labels = tf.constant(RNG.randint(0, 3, 8).astype(np.int64))
    hidden = v1.layers.conv2d(images, 4, 3, padding="same", name="conv")
    hidden = tf.nn.relu(v1.layers.batch_normalization(hidden, training=training, name="bn"))
    hidden = tf.nn.max_pool2d(hidden, 2, 2, "VALID")
    logits = v1.layers.dense(tf.reshape(hidden, [8, 64]), 3, name="conv_logits")
    update_ops = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        return tf.identity(tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)))


def recurrent(keep_prob):
    """GRU and LSTM cells in a MultiRNNCell with DropoutWrapper, run by dynamic_rnn."""
    inputs = tf.constant(RNG.rand(4, 6, 5).astype(np.float32))
    cells = v1.nn.rnn_cell.MultiRNNCell(
        [
            v1.nn.rnn_cell.DropoutWrapper(v1.nn.rnn_cell.GRUCell(8, name="gru"), output_keep_prob=keep_prob),
            v1.nn.rnn_cell.LSTMCell(8, name="lstm"),
        ]
    )
    outputs, _ = v1.nn.dynamic_rnn(cells, inputs, dtype=tf.float32, scope="rnn")
    return tf.reduce_mean(tf.square(outputs[:, -1, :] - 0.5))


def npu_dynamic_rnn():
    inputs = tf.constant(RNG.rand(10, 4, 5).astype(np.float32))  # time major
    outputs = DynamicRNN(8, tf.float32, name="npu_lstm")(inputs)[0]
    return tf.reduce_mean(tf.square(outputs[-1] - 0.5))


def embedding():
    """unique + gather over an embedding table, sparse gradient updates."""
    ids = tf.constant(RNG.randint(0, 50, 40).astype(np.int64))
    table = v1.get_variable("embedding", [50, 6], initializer=v1.random_uniform_initializer(-0.5, 0.5))
    unique, index = tf.unique(ids)
    rows = tf.gather(tf.gather(table, unique), index)
    return tf.reduce_mean(tf.square(tf.reduce_sum(rows, axis=1) - 1.0))


def control_flow(flag):
    weight = v1.get_variable("loop_weight", [6, 6], initializer=v1.random_uniform_initializer(-0.3, 0.3))
    start = tf.constant(RNG.rand(4, 6).astype(np.float32))
    start = tf.cond(flag, lambda: tf.matmul(start, weight), lambda: start * 2.0)
    _, looped = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, weight))), [0, start])
    return tf.reduce_mean(tf.square(looped - 0.3))


def integer_and_string_ops():
    words = tf.constant(["npu", "bridge", "ascend", "tensorflow", "npu", "cube"] * 4)
    buckets = tf.math.floormod(tf.strings.to_hash_bucket_fast(words, 30) * 3 + 1, 30)
    table = v1.get_variable("string_embedding", [30, 4], initializer=v1.random_uniform_initializer(-0.5, 0.5))
    values = tf.nn.embedding_lookup(table, buckets)
    return tf.reduce_mean(tf.square(tf.reduce_sum(values, axis=1) - tf.cast(tf.size(buckets) % 7, tf.float32)))


def build():
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(1)
        keep_prob = v1.placeholder(tf.float32)
        training = v1.placeholder_with_default(True, [])
        flag = v1.placeholder_with_default(True, [])
        classifier_loss, matmul = dense_classifier(keep_prob)
        losses = {
            "dense_classifier": classifier_loss,
            "conv_net": conv_net(training),
            "rnn_cells": recurrent(keep_prob),
            "dynamic_rnn": npu_dynamic_rnn(),
            "embedding": embedding(),
            "control_flow": control_flow(flag),
            "int_and_string": integer_and_string_ops(),
        }
        # Adam's default epsilon (1e-8) is 0 in fp16: under force_fp16 the composite sparse update divides by 0,
        # on an NPU as here. Scripts that train in fp16 raise it; so does this one.
        train = v1.train.AdamOptimizer(0.05, epsilon=1e-4).minimize(tf.add_n(list(losses.values())))
        kernel = next(v for v in v1.global_variables() if v.name == "classifier_hidden/kernel:0")
        init = v1.global_variables_initializer()
    return graph, dict(keep_prob=keep_prob, losses=losses, train=train, matmul=matmul, kernel=kernel, init=init)


def config(key, mode, instrumentation, backend, work_dir, index):
    proto = v1.ConfigProto()
    entry = proto.graph_options.rewrite_options.custom_optimizers.add()
    entry.name = "NpuOptimizer"
    entry.parameter_map["device_target"].s = backend.encode()
    if mode is not None:
        entry.parameter_map[key].s = mode.encode()
    if instrumentation != "plain":
        entry.parameter_map["dump_path"].s = f"{work_dir}/{index}".encode()
    if instrumentation == "overflow":
        entry.parameter_map["enable_dump_debug"].b = True
    if instrumentation == "dump":
        entry.parameter_map["enable_dump"].b = True
        entry.parameter_map["dump_step"].s = b"1"
    return proto


def main(backend, work_dir):
    graph, parts = build()
    index = 0
    instrumented = INSTRUMENTED_MODES_CPU if backend == "cpu" else INSTRUMENTED_MODES
    for instrumentation in INSTRUMENTATION:
        for key, mode in MODES if instrumentation == "plain" else instrumented:
            index += 1
            os.makedirs(f"{work_dir}/{index}", exist_ok=True)
            system.shutdown()  # precision_mode is an init option: each combination initializes anew
            with v1.Session(graph=graph, config=config(key, mode, instrumentation, backend, work_dir, index)) as sess:
                sess.run(parts["init"])
                # One fetch list before and after training: TensorFlow optimizes each new (fetches, feeds) signature
                # of a session anew, which is most of this worker's time.
                evaluate = ([parts["losses"], parts["matmul"], parts["kernel"]], {parts["keep_prob"]: 1.0})
                before = sess.run(*evaluate)[0]
                for _ in range(6):
                    sess.run(parts["train"], {parts["keep_prob"]: 0.9})
                after, matmul, kernel = sess.run(*evaluate)
            reference = FEATURES.astype(np.float64) @ kernel.astype(np.float64)
            error = float(np.max(np.abs(matmul - reference)) / np.max(np.abs(reference)))
            line = {
                "mode": f"{key}={mode}",
                "instrumentation": instrumentation,
                "losses_before": {k: float(v) for k, v in before.items()},
                "losses_after": {k: float(v) for k, v in after.items()},
                "matmul_error": error,
            }
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
