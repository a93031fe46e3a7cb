"""Which ops the overflow check, the dump and the exception capture watch (one predicate, `Watches` in
optimizers/graph/instrumentation.h, with the differences between them it states: one test each), and how their
nodes are attached: an op a run fetches runs its observers too, and the graphs of one session do not share the
instrumentation's kernels (TensorFlow shares a stateful kernel among a session's nodes of one name)."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.dump import artifacts, dump_config, dumped, feed, mlp_graph

from npu_bridge.core.compute import composite
from npu_bridge.core.dump import overflow_records
from npu_bridge.core.precision import float_status

v1 = tf.compat.v1
INSTRUMENTATION = {"NpuOverflowCheck": "overflow check", "NpuDump": "dump", "NpuExceptionCapture": "exception capture"}


def all_instrumentation(path, **options):
    """Dump, overflow detection and exception capture in one session."""
    return dump_config(path, enable_dump_debug=True, enable_exception_dump=1, **options)


def watched(sess, fetches, feed_dict):
    """Runs ``fetches`` once; returns {instrumentation: the op names it watched in the graph that ran}."""
    metadata = v1.RunMetadata()
    values = sess.run(fetches, feed_dict, options=v1.RunOptions(output_partition_graphs=True), run_metadata=metadata)
    found = {name: set() for name in INSTRUMENTATION.values()}
    for partition in metadata.partition_graphs:
        for node in partition.node:
            if node.op in INSTRUMENTATION:
                found[INSTRUMENTATION[node.op]].add(node.attr["op_name"].s.decode())
    return values, found


def cube(v):
    return v * v * v


def mixed_graph():
    """One op of each kind the instrumentations tell apart; returns (graph, x, {kind: tensor}, {kind: op name})."""
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2], name="x")
        before = len(graph.get_operations())
        called = tf.function(cube, autograph=False, experimental_attributes={"_noinline": True})(x)
        (call,) = [op for op in graph.get_operations()[before:] if composite.is_call(op.type)]
        (composed,) = composite.call("Cube", lambda v: (cube(v),), [x])
        plain = tf.exp(called + composed, name="plain")
        status = float_status.npu_alloc_float_status(name="status")  # a source: no inputs
        with tf.control_dependencies([plain]):
            register = float_status.npu_get_float_status(status, name="register")
        fed = tf.square(x, name="fed")
    composed_call = composed.op.name
    tensors = {"plain": plain, "register": register, "fed": fed}
    names = {"call": call.name, "composed": composed_call, "plain": "plain", "register": "register"}
    names.update(status="status", fed="fed")
    return graph, x, tensors, names


# kind -> the instrumentations that watch it
EXPECTED = {
    "plain": {"overflow check", "dump", "exception capture"},
    "composed": {"overflow check", "dump", "exception capture"},  # a composed op's call is one op
    "call": {"overflow check"},  # difference 1: structural ops (an uncomposed call) only for the check
    "register": {"dump", "exception capture"},  # difference 2: the float-status register's ops not checked
    "status": set(),  # a source (no inputs)
    "fed": set(),  # does not run
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_which_ops_each_instrumentation_watches(tmp_path, monkeypatch, kind):
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph, x, tensors, names = mixed_graph()
    with v1.Session(graph=graph, config=all_instrumentation(tmp_path)) as sess:
        fed_value = np.zeros(2, np.float32)
        _, found = watched(sess, list(tensors.values()), {x: [1.0, 2.0], tensors["fed"]: fed_value})
    assert {what for what, ops in found.items() if names[kind] in ops} == EXPECTED[kind]


def test_an_overflow_inside_an_uncomposed_call_is_recorded_as_the_call_which_is_not_dumped(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph, x, tensors, names = mixed_graph()
    with v1.Session(graph=graph, config=all_instrumentation(tmp_path)) as sess:
        sess.run(tensors["plain"], {x: [1.0, 2.0]})  # step 0: no overflow
        sess.run(tensors["plain"], {x: [1e20, 1.0]})  # step 1: cubed, inf inside both function bodies
    recorded = {(e.op_name, e.op_type, e.step) for e in overflow_records.find(tmp_path)}
    assert {(names["call"], "PartitionedCall", 1), (names["composed"], "Cube", 1), ("plain", "Exp", 1)} <= recorded
    dumped_types = {a.name.op_type for a in artifacts(tmp_path) if a.step == 0}  # the overflow records' dumps later
    assert {"Cube", "Exp", "AddV2"} <= dumped_types and not dumped_types & {"PartitionedCall", "Mul"}


def test_the_float_status_register_is_dumped_but_not_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph, x, tensors, _ = mixed_graph()
    with v1.Session(graph=graph, config=all_instrumentation(tmp_path)) as sess:
        # plain is fetched too: an op with only control outputs that is not fetched becomes a NoOp in Grappler
        _, flags = sess.run([tensors["plain"], tensors["register"]], {x: [1e20, 1.0]})
    assert flags.tolist() == [1.0]  # the register saw the overflows of the ops before it
    register = dumped(tmp_path, "register")
    assert register.name.op_type == "NpuGetFloatStatus" and register.outputs[0].array().tolist() == [1.0]
    assert "register" not in {e.op_name for e in overflow_records.find(tmp_path)}


def test_a_fetched_op_is_dumped_checked_and_captured_under_every_graph_of_a_session(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph, x, tensors, names = mixed_graph()
    with v1.Session(graph=graph, config=all_instrumentation(tmp_path)) as sess:
        alone = watched(sess, tensors["plain"], {x: [1.0, 2.0]})[1]  # nothing but the fetch reads plain
        with_register = watched(sess, [tensors["plain"], tensors["register"]], {x: [1.0, 2.0]})[1]
    for found in (alone, with_register):
        assert {what for what, ops in found.items() if "plain" in ops} == EXPECTED["plain"]
        assert {what for what, ops in found.items() if names["composed"] in ops} == EXPECTED["composed"]


def model_of(root, op_name, step=0):
    """The models whose step ``step`` holds a dump of ``op_name``."""
    return {a.model for a in artifacts(root) if a.name.op_name == op_name.replace("/", "_") and a.step == step}


def test_two_graphs_of_a_session_dump_the_same_op_into_their_own_models_and_steps(tmp_path):
    graph, x, y, parts = mlp_graph()
    with v1.Session(graph=graph, config=dump_config(tmp_path, dump_step="0")) as sess:
        sess.run(parts["init"])
        evaluated = sess.run(parts["loss"], feed(x, y, 0))  # the evaluation graph: its step 0
        trained = sess.run([parts["loss"], parts["train"]], feed(x, y, 1))[0]  # the training graph: its step 0
    (evaluation,) = model_of(tmp_path, "layer1/MatMul") - model_of(tmp_path, "gradients/layer1/Tanh_grad/TanhGrad")
    (training,) = model_of(tmp_path, "gradients/layer1/Tanh_grad/TanhGrad")
    assert model_of(tmp_path, "loss") == {evaluation, training}  # not only the graph that ran it first
    assert dumped(tmp_path, "loss", 0, evaluation).outputs[0].array() == evaluated
    assert dumped(tmp_path, "loss", 0, training).outputs[0].array() == trained


def test_two_graphs_of_a_session_record_an_overflow_of_the_same_op_in_their_own_models_and_steps(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2], name="x")
        cubed = tf.pow(x, 3.0, name="cubed")
        total = tf.reduce_sum(cubed, name="total")
    with v1.Session(graph=graph, config=dump_config(tmp_path, enable_dump=False, enable_dump_debug=True)) as sess:
        sess.run(cubed, {x: [1.0, 2.0]})  # graph A, step 0: no overflow
        sess.run(cubed, {x: [1e20, 2.0]})  # graph A, step 1
        sess.run(total, {x: [1e20, 2.0]})  # graph B, step 0
    by_model = {}
    for entry in overflow_records.find(tmp_path):
        by_model.setdefault(entry.model, set()).add((entry.op_name, entry.step))
    assert sorted(by_model.values(), key=len) == [{("cubed", 1)}, {("cubed", 0), ("total", 0)}]


def test_a_failing_op_is_captured_whether_a_run_fetches_it_or_a_value_computed_from_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph = tf.Graph()
    with graph.as_default():
        params = v1.placeholder(tf.float32, [3], name="params")
        indices = v1.placeholder(tf.int32, [1], name="indices")
        looked_up = tf.gather(params, indices, name="lookup")
        total = tf.reduce_sum(looked_up, name="total")
    messages = []
    with v1.Session(graph=graph, config=dump_config(tmp_path, enable_dump=False, enable_exception_dump=1)) as sess:
        sess.run(total, {params: [1.0, 2.0, 3.0], indices: [0]})  # the graph with total runs first
        for fetch in (looked_up, total):
            with pytest.raises(tf.errors.InvalidArgumentError) as raised:
                sess.run(fetch, {params: [1.0, 2.0, 3.0], indices: [7]})
            messages.append(str(raised.value))
    for message in messages:
        assert "the 3 inputs of GatherV2 lookup (the op that failed, created at " in message, message
        assert f"{__file__}:" in message and "were written to" in message


def test_a_stateful_op_keeps_one_kernel_across_the_graphs_of_a_dumping_session(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph = tf.Graph()
    with graph.as_default():
        noise = tf.random.uniform([3], seed=1, name="noise")
        doubled = tf.multiply(noise, 2.0, name="doubled")

    def draws(config):
        with v1.Session(graph=graph, config=config) as sess:
            return [sess.run(noise), sess.run(doubled) / 2, sess.run(noise)]

    plain = draws(npu_config())
    assert not np.array_equal(plain[0], plain[1])  # one random state, whichever graph draws
    np.testing.assert_array_equal(draws(all_instrumentation(tmp_path)), plain)
