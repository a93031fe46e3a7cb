"""A DynamicRNN whose output a run fetches is dumped like every other op: one file in the step directory of the graph
that run ran, also when nothing but the fetch reads the RNN (its call is dumped after it ran, not forwarded)."""

import collections
import os
import re

import numpy as np
import tensorflow as tf
from helpers.dump import artifacts, dump_config

from npu_bridge.core.dump import dump_file
from npu_bridge.estimator.npu.npu_dynamic_rnn import DynamicRNN

v1 = tf.compat.v1
T, B, F, H = 6, 2, 3, 4
RNN = "lstm/PartitionedCall"  # the name the call node of DynamicRNN(name="lstm") has


def rnn_graph():
    """(graph, x, the 8 DynamicRNN outputs, total = the sum of its output y, init)."""
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [T, B, F], name="x")
        outputs = DynamicRNN(H, tf.float32, name="lstm")(x)
        total = tf.reduce_sum(outputs[0], name="total")
        init = v1.global_variables_initializer()
    return graph, x, outputs, total, init


def inputs(seed):
    return np.random.RandomState(seed).uniform(-1, 1, (T, B, F)).astype(np.float32)


def dumps_by_model(root):
    """{model: {step: [(op type, op name, loaded dump)]}} of the dump files under ``root``, except the model of
    the initializer run (the only one without the RNN)."""
    found = collections.defaultdict(lambda: collections.defaultdict(list))
    for artifact in artifacts(root):
        loaded = dump_file.load(artifact.path)
        found[artifact.model][artifact.step].append((artifact.name.op_type, loaded.op_name, loaded, artifact.path))
    return {
        model: {step: sorted(files, key=lambda f: f[0]) for step, files in steps.items()}
        for model, steps in found.items()
        if any(f[1] == RNN for files in steps.values() for f in files)
    }


def step_directories(root, model):
    (model_dir,) = {os.path.dirname(os.path.dirname(a.path)) for a in artifacts(root) if a.model == model}
    return sorted(os.listdir(model_dir))


def test_a_run_that_fetches_the_rnn_output_dumps_the_rnn_in_its_step_directory(tmp_path):
    graph, x, outputs, _, init = rnn_graph()
    with v1.Session(graph=graph, config=dump_config(tmp_path, dump_step="0", dump_mode="output")) as sess:
        sess.run(init)
        y = sess.run(outputs[0], {x: inputs(0)})
    models = dumps_by_model(tmp_path)
    assert len(models) == 1, models  # the run fetching y is a model of its own, dumped
    ((model, steps),) = models.items()
    assert step_directories(tmp_path, model) == ["0"]
    ((op_type, op_name, loaded, path),) = steps[0]  # exactly one dump file: the RNN's
    assert (op_type, op_name) == ("DynamicRNN", RNN)
    assert re.fullmatch(r"DynamicRNN\.lstm_PartitionedCall\.\d+\.0\.\d{16}", os.path.basename(path))
    assert [t.io for t in loaded.tensors] == ["output"] * 8  # y, output_h, output_c, i, j, f, o, tanhc
    assert [tuple(o.shape) for o in loaded.outputs] == [(T, B, H)] * 8
    np.testing.assert_array_equal(loaded.outputs[0].array(), y)


def test_runs_fetching_the_rnn_output_and_a_value_computed_from_it_dump_into_their_own_models_and_steps(tmp_path):
    graph, x, outputs, total, init = rnn_graph()
    with v1.Session(graph=graph, config=dump_config(tmp_path, dump_step="0|1", dump_mode="output")) as sess:
        sess.run(init)
        y_first = sess.run(outputs[0], {x: inputs(0)})  # model A, step 0
        total_value = sess.run(total, {x: inputs(0)})  # model B, step 0
        y_second = sess.run(outputs[0], {x: inputs(1)})  # model A, step 1
    models = dumps_by_model(tmp_path)
    rnn_only = [m for m, steps in models.items() if all(f[0] == "DynamicRNN" for s in steps.values() for f in s)]
    with_total = [m for m in models if m not in rnn_only]
    assert len(rnn_only) == 1 and len(with_total) == 1, models
    fetching_y, fetching_total = models[rnn_only[0]], models[with_total[0]]

    assert sorted(fetching_y) == [0, 1] and step_directories(tmp_path, rnn_only[0]) == ["0", "1"]
    for step, expected in ((0, y_first), (1, y_second)):
        ((op_type, op_name, loaded, _),) = fetching_y[step]
        assert (op_type, op_name) == ("DynamicRNN", RNN)
        np.testing.assert_array_equal(loaded.outputs[0].array(), expected)

    assert list(fetching_total) == [0] and step_directories(tmp_path, with_total[0]) == ["0"]
    (rnn, total_dump) = fetching_total[0]
    assert (rnn[0], rnn[1]) == ("DynamicRNN", RNN) and (total_dump[0], total_dump[1]) == ("Sum", "total")
    np.testing.assert_array_equal(rnn[2].outputs[0].array(), y_first)  # the same input as the first run
    np.testing.assert_allclose(total_dump[2].outputs[0].array(), total_value)
