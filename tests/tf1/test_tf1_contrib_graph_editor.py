"""``tf.contrib.graph_editor`` of the TF1 mode: walks and selections by name, rerouting and copying checked by
running the graph (values), control inputs, gradient checkpointing as OpenAI's ``memory_saving_gradients.py`` (in
zoo models) does it, errors naming their argument, and the route in the mode."""

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1 import graph_editor as ge

v1 = tf.compat.v1


def run(fetches, feed=None):
    with v1.Session() as session:
        return session.run(fetches, feed)


def names(ops_or_ts):
    return sorted(item.name for item in ops_or_ts)


@pytest.fixture
def chain():
    """a (placeholder), b (const) -> c = a + b -> d = c * 2 -> e = identity(d); f = c - 1 beside d."""
    with tf.Graph().as_default() as graph:
        a = v1.placeholder(tf.float32, [2], name="a")
        b = tf.constant([1.0, 2.0], name="b")
        c = tf.add(a, b, name="c")
        d = tf.multiply(c, 2.0, name="d")
        e = tf.identity(d, name="e")
        f = tf.subtract(c, 1.0, name="f")
        yield graph, dict(a=a, b=b, c=c, d=d, e=e, f=f)


# ---------------------------------------------------------------- selecting


def test_forward_and_backward_walks_return_the_ops_named_as_expected(chain):
    _, t = chain
    assert names(ge.get_forward_walk_ops(t["a"].op)) == ["a", "c", "d", "e", "f"]
    assert names(ge.get_forward_walk_ops([t["c"].op], inclusive=False)) == ["d", "e", "f"]
    assert names(ge.get_forward_walk_ops([t["a"]])) == ["c", "d", "e", "f"]  # tensors: their consumers are the seeds
    assert names(ge.get_forward_walk_ops(t["a"].op, stop_at_ts=[t["c"]])) == ["a", "c"]
    assert names(ge.get_backward_walk_ops([t["e"].op])) == ["a", "b", "c", "d", "d/y", "e"]
    assert names(ge.get_backward_walk_ops(t["e"].op, inclusive=False, stop_at_ts=[t["c"]])) == ["d", "d/y"]
    assert names(ge.get_backward_walk_ops([t["e"]])) == ["a", "b", "c", "d", "d/y", "e"]
    within = [t["c"].op, t["d"].op, t["e"].op]
    assert names(ge.get_backward_walk_ops(t["e"].op, within_ops=within)) == ["c", "d", "e"]
    assert names(ge.get_forward_walk_ops(t["a"].op, within_ops_fn=lambda op: op.name != "d")) == ["a", "c", "f"]
    assert ge.get_forward_walk_ops([]) == [] and ge.get_backward_walk_ops([]) == []
    assert names(ge.get_walks_intersection_ops([t["b"].op], [t["e"].op])) == ["b", "c", "d", "e"]


def test_filters_and_selections_by_regex(chain):
    graph, t = chain
    assert [x.name for x in ge.filter_ts_from_regex([t["c"].op, t["d"].op], "^c")] == ["c:0"]
    assert [x.name for x in ge.filter_ts([t["d"].op], True)] == ["c:0", "d/y:0", "d:0"]  # inputs, then outputs
    assert names(ge.filter_ts_from_regex(graph, "Mul|Add|^d")) == ["d/y:0", "d:0"]  # names, not types
    assert names(ge.filter_ops_from_regex(graph, "^[cd]$")) == ["c", "d"]
    assert names(ge.select_ops("^d.*", graph=graph)) == ["d", "d/y"]
    assert names(ge.select_ops([t["c"].op, t["d"]], graph=graph)) == ["c"]  # tensors are ignored
    assert names(ge.select_ts("^[ab]:", graph=graph)) == ["a:0", "b:0"]
    assert names(ge.get_name_scope_ops(graph, "d")) == ["d", "d/y"]
    view = ge.sgv([t["c"].op, t["d"].op])
    assert names(view.ops) == ["c", "d"]
    assert names(view.inputs) == ["a:0", "b:0", "d/y:0"]
    assert names(view.outputs) == ["c:0", "d:0"]  # c is also read by f, outside the view


# ---------------------------------------------------------------- rerouting and copying


def test_reroute_ts_makes_the_consumers_read_the_new_tensor(chain):
    graph, t = chain
    with graph.as_default():
        new = tf.constant([10.0, 20.0], name="new")
    assert run([t["e"], t["f"]], {t["a"]: [1.0, 1.0]})[0].tolist() == [4.0, 6.0]
    changed = ge.reroute_ts([new], [t["c"]], can_modify=[t["d"].op])  # d reads new, f still reads c
    assert changed == 1
    e, f = run([t["e"], t["f"]], {t["a"]: [1.0, 1.0]})
    assert e.tolist() == [20.0, 40.0] and f.tolist() == [1.0, 2.0]
    assert ge.reroute_ts(new, t["c"]) == 1  # f now too
    assert run(t["f"]).tolist() == [9.0, 19.0]
    assert ge.swap_ts([new], [t["b"]]) == 3  # d, f read b; c reads new
    e, f = run([t["e"], t["f"]], {t["a"]: [1.0, 1.0]})
    assert e.tolist() == [2.0, 4.0] and f.tolist() == [0.0, 1.0]


def test_copy_with_input_replacements_computes_with_the_replacement(chain):
    graph, t = chain
    with graph.as_default():
        replacement = tf.constant([5.0, 6.0], name="replacement")
    copied, info = ge.copy_with_input_replacements(ge.sgv(t["c"].op, t["d"].op), {t["a"]: replacement})
    d_copy = info.transformed(t["d"])
    assert d_copy is info._transformed_ops[t["d"].op]._outputs[0]  # how memory_saving_gradients reads it
    assert info.original(d_copy) is t["d"]
    assert names(copied.ops) == ["c_1", "d_1"]
    assert run(d_copy).tolist() == [12.0, 16.0]  # (5 + 1) * 2, (6 + 2) * 2
    assert run(t["d"], {t["a"]: [0.0, 0.0]}).tolist() == [2.0, 4.0]  # the original is untouched
    plain, plain_info = ge.copy(ge.sgv(t["c"].op), dst_scope="copy")
    assert plain_info.transformed(t["c"]).name == "copy/c:0"
    graph_placeholders = names(op for op in graph.get_operations() if op.type == "Placeholder")
    assert graph_placeholders == ["a", "copy/geph__a_0", "copy/geph__b_0"]  # the view's inputs: placeholders
    feeds = {
        graph.get_tensor_by_name("copy/geph__a_0:0"): [1.0, 1.0],
        graph.get_tensor_by_name("copy/geph__b_0:0"): [2.0, 2.0],
    }
    assert run(plain_info.transformed(t["c"]), feeds).tolist() == [3.0, 3.0]
    other = tf.Graph()
    _, into_other = ge.copy(ge.sgv(t["c"].op, t["d"].op), other)
    with other.as_default():
        placeholders = sorted((op for op in other.get_operations() if op.type == "Placeholder"), key=lambda o: o.name)
        assert [op.name for op in placeholders] == ["geph__a_0", "geph__b_0", "geph__y_0"]  # in dst_scope ("")
        feeds = {op.outputs[0]: value for op, value in zip(placeholders, ([1.0, 2.0], [3.0, 4.0], 10.0))}
        assert run(into_other.transformed(t["d"]), feeds).tolist() == [40.0, 60.0]


def test_graph_replace_recomputes_the_targets():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [], name="x")
        y = tf.square(x) + 1.0
        other = tf.constant(3.0)
        (replaced,) = ge.graph_replace([y], {x: other})
        assert run([replaced, y], {x: 2.0}) == [10.0, 5.0]


def test_add_and_remove_control_inputs():
    with tf.Graph().as_default():
        counter = v1.get_variable("counter", [], initializer=v1.zeros_initializer(), use_resource=False)
        bump = v1.assign_add(counter, 1.0)
        x = tf.constant(1.0)
        y = tf.identity(x, name="y")
        ge.add_control_inputs(y.op, [bump.op])
        assert y.op.control_inputs == [bump.op]
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            session.run(y)
            session.run(y)
            assert session.run(counter) == 2.0
        ge.remove_control_inputs(y.op, bump.op)  # edits are made before a session runs the graph, as in TF 1.15
        assert y.op.control_inputs == []
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            session.run(y)
            assert session.run(counter) == 0.0


# ---------------------------------------------------------------- gradient checkpointing


def checkpointed_gradients(ys, xs, checkpoints):
    """The gradients of ``ys`` for ``xs`` recomputing the forward pass from ``checkpoints``, the way
    ``memory_saving_gradients.gradients`` does (one segment after the checkpoints, then one per checkpoint)."""
    bwd_ops = ge.get_backward_walk_ops([y.op for y in ys], inclusive=True)
    fwd_ops = ge.get_forward_walk_ops([x.op for x in xs], inclusive=True, within_ops=bwd_ops)
    fwd_ops = [op for op in fwd_ops if op.inputs and op not in [x.op for x in xs] and "/read" not in op.name]
    disconnected = {c: tf.stop_gradient(c, name=c.op.name + "_sg") for c in checkpoints}

    def backward_ops(seed_ops, stop_at_ts):
        found = set(ge.get_backward_walk_ops(seed_ops, stop_at_ts=stop_at_ts))
        return list(found.intersection(fwd_ops).difference([t.op for t in stop_at_ts]))

    _, info = ge.copy_with_input_replacements(ge.sgv(backward_ops([y.op for y in ys], checkpoints)), {})
    copied_ops = info._transformed_ops.values()
    ge.reroute_ts(list(disconnected.values()), list(disconnected), can_modify=copied_ops)
    copied_ys = [info._transformed_ops[y.op]._outputs[0] for y in ys]
    grads = tf.gradients(copied_ys, list(disconnected.values()) + xs)
    for op in list(copied_ops) + [g.op for g in grads if g is not None]:
        wanted = [y.op for y in ys if y.op not in op.control_inputs]
        ge.add_control_inputs(op, wanted)
    d_checkpoints = dict(zip(disconnected, grads[: len(disconnected)]))
    d_xs = grads[len(disconnected) :]
    for checkpoint in checkpoints:  # one checkpoint per segment here (a chain)
        others = [c for c in checkpoints if c is not checkpoint]
        ops = backward_ops([checkpoint.op], others)
        _, info = ge.copy_with_input_replacements(ge.sgv(ops), {})
        ge.reroute_ts([disconnected[c] for c in others], others, can_modify=info._transformed_ops.values())
        boundary = [info._transformed_ops[checkpoint.op]._outputs[0]]
        dv = tf.gradients(boundary, [disconnected[c] for c in others] + xs, grad_ys=[d_checkpoints[checkpoint]])
        for other, grad in zip(others, dv[: len(others)]):
            if grad is not None:
                d_checkpoints[other] = d_checkpoints[other] + grad
        d_xs = [a if b is None else (b if a is None else a + b) for a, b in zip(d_xs, dv[len(others) :])]
    return d_xs


def test_gradients_through_checkpoints_equal_plain_gradients():
    rng = np.random.RandomState(3)
    with tf.Graph().as_default():
        x = tf.constant(rng.randn(4, 3).astype(np.float32))
        w1 = v1.get_variable("w1", initializer=rng.randn(3, 5).astype(np.float32), use_resource=False)
        w2 = v1.get_variable("w2", initializer=rng.randn(5, 2).astype(np.float32), use_resource=False)
        h1 = tf.tanh(tf.matmul(x, w1))
        loss = tf.reduce_sum(tf.square(tf.sigmoid(tf.matmul(h1, w2))))
        expected = tf.gradients(loss, [w1, w2])
        got = checkpointed_gradients([loss], [w1, w2], [h1])
        assert len(ge.select_ops("gradients", graph=tf.compat.v1.get_default_graph())) > 0
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            expected_values, got_values = session.run([expected, got])
    for want, have in zip(expected_values, got_values):
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- errors


def test_bad_arguments_raise_errors_naming_them(chain):
    graph, t = chain
    with pytest.raises(NpuArgumentError, match=r"ts0 and ts1 must have the same length, got 1 and 2"):
        ge.reroute_ts([t["c"]], [t["d"], t["e"]])
    with graph.as_default():
        ints = tf.constant([1, 2])
    with pytest.raises(NpuArgumentError, match=r"differ in dtype"):
        ge.reroute_ts([ints], [t["c"]])
    with pytest.raises(NpuArgumentTypeError, match=r"ts0 holds .*allowed: tf.Tensor"):
        ge.reroute_ts([t["c"].op], [t["d"]])
    with pytest.raises(NpuArgumentTypeError, match=r"op must be a tf.Operation, got SymbolicTensor"):
        ge.add_control_inputs(t["e"], [t["c"].op])
    ge.add_control_inputs(t["e"].op, [t["f"].op])
    with pytest.raises(NpuArgumentError, match=r"cops: f is already a control input of e"):
        ge.add_control_inputs(t["e"].op, t["f"].op)
    with pytest.raises(NpuArgumentError, match=r"cops: d is not a control input of e"):
        ge.remove_control_inputs(t["e"].op, t["d"].op)
    with pytest.raises(NpuArgumentError, match=r"needs the keyword argument graph"):
        ge.select_ops("^d")
    with pytest.raises(NpuArgumentError, match=r"unknown keyword argument 'grpah'; allowed: graph"):
        ge.select_ops("^d", grpah=graph)
    with pytest.raises(NpuArgumentTypeError, match=r"graph must be a tf.Graph, got str"):
        ge.select_ops("^d", graph="g")
    with pytest.raises(NpuArgumentError, match=r"regex must be a string or a compiled regular expression, got int"):
        ge.filter_ts_from_regex(graph, 3)
    with pytest.raises(NpuArgumentTypeError, match=r"replacement_ts must be a dict"):
        ge.copy_with_input_replacements(ge.sgv(t["c"].op), [t["a"]])
    with pytest.raises(NpuArgumentTypeError, match=r"dst_graph must be a tf.Graph or None, got str"):
        ge.copy(ge.sgv(t["c"].op), "graph")
    with tf.Graph().as_default():
        elsewhere = tf.constant([0.0, 0.0])
    with pytest.raises(NpuArgumentError, match=r"belongs to another graph"):
        ge.reroute_ts([elsewhere, t["c"]], [t["d"], t["e"]])
    with pytest.raises(NpuArgumentError, match=r"new_input_indices: index 7 is outside \[0, 3\)"):
        ge.sgv(t["c"].op, t["d"].op).remap_inputs([7])


# ---------------------------------------------------------------- in the mode

SCRIPT = """
import json
import tensorflow as tf
import tensorflow.contrib.graph_editor as ge
from tensorflow.contrib.graph_editor import reroute_ts, SubGraphView

a = tf.placeholder(tf.float32, [], name="a")
b = a * 3.0
c = b + 1.0
new = tf.constant(10.0)
changed = tf.contrib.graph_editor.reroute_ts([new], [b], can_modify=ge.get_forward_walk_ops(b.op, inclusive=False))
_, info = ge.copy_with_input_replacements(ge.sgv(c.op), {})
with tf.Session() as session:
    values = session.run([c, info._transformed_ops[c.op]._outputs[0]], {a: 1.0})
print("RESULT " + json.dumps({"changed": changed, "values": [float(v) for v in values],
                              "view": isinstance(ge.sgv(c.op), SubGraphView), "same": reroute_ts is ge.reroute_ts}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_graph_editor_in_the_mode(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, SCRIPT)
    assert found == {"changed": 1, "values": [11.0, 11.0], "view": True, "same": True}
