"""iterations_per_loop: one sess.run of the IterationOp performs N training steps, exactly as N single steps
would (same variables, same batches consumed, the last step's fetched values), and a run that cannot loop
fails instead of silently doing one step."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config

from npu_bridge.core.runtime.errors import NpuOptionError
from npu_bridge.estimator.npu import npu_hook, util

v1 = tf.compat.v1


def build_model(use_resource=True, optimizer="momentum", extra=None):
    """A linear model on a dataset of consecutive numbers; returns the graph and its tensors."""
    graph = tf.Graph()
    with graph.as_default():
        dataset = tf.data.Dataset.range(10000).map(lambda i: tf.cast(i, tf.float32)).batch(2)
        iterator = v1.data.make_initializable_iterator(dataset)
        x = iterator.get_next()
        global_step = v1.train.get_or_create_global_step()
        w = v1.get_variable("w", initializer=1.0, use_resource=use_resource)
        y = x * w
        if extra == "cond":  # a TF1 cond inside the step
            y = tf.cond(tf.reduce_sum(x) > 20.0, lambda: y * 0.5, lambda: y)
        elif extra == "while":  # a TF1 while loop inside the step
            y = v1.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, acc + y), (0, tf.zeros_like(y)))[1]
        loss = tf.reduce_sum(y)
        opt = (
            v1.train.MomentumOptimizer(0.001, 0.9)
            if optimizer == "momentum"
            else v1.train.GradientDescentOptimizer(0.001)
        )
        train_op = opt.minimize(loss, global_step=global_step)
        init = [v1.global_variables_initializer(), v1.local_variables_initializer(), iterator.initializer]
    return graph, {"x": x, "w": w, "loss": loss, "global_step": global_step, "train_op": train_op, "init": init}


def reference_run(model_args, steps):
    """The same model trained step by step in a plain session: (last loss, last batch, w, global step)."""
    graph, t = build_model(**model_args)
    with v1.Session(graph=graph) as sess:
        sess.run(t["init"])
        for _ in range(steps):
            _, loss, x = sess.run([t["train_op"], t["loss"], t["x"]])
        return loss, x, sess.run(t["w"]), sess.run(t["global_step"])


@pytest.mark.parametrize(
    "model_args",
    [
        {"use_resource": True},
        {"use_resource": False},
        {"optimizer": "sgd", "extra": "cond"},
        {"optimizer": "sgd", "extra": "while"},
    ],
    ids=["resource", "ref", "cond", "while_loop"],
)
def test_one_run_performs_n_steps_like_n_single_steps(model_args):
    graph, t = build_model(**model_args)
    with v1.Session(graph=graph, config=npu_config(iterations_per_loop=5)) as sess:
        sess.run(t["init"])
        train = util.set_iteration_per_loop(sess, t["train_op"], 5)
        for _ in range(3):
            _, loss, x = sess.run([train, t["loss"], t["x"]])
        w, step = sess.run(t["w"]), sess.run(t["global_step"])
    ref_loss, ref_x, ref_w, ref_step = reference_run(model_args, 15)
    assert step == ref_step == 15
    assert list(x) == list(ref_x) == [28.0, 29.0]  # 15 batches consumed, the last one fetched
    assert loss == pytest.approx(ref_loss, rel=1e-6)
    assert w == pytest.approx(ref_w, rel=1e-6)


def test_rnn_batch_norm_dropout_adam_model_matches_step_by_step():
    """A realistic model: dynamic_rnn (a while loop and its gradient), batch-norm update ops, dropout (random
    numbers), gradient clipping, Adam and a summary, trained 10 steps in one graph: step by step in one session,
    as 2 loops of 5 in another."""
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(1)
        rng = np.random.RandomState(0)
        data = (rng.rand(64, 6, 3).astype(np.float32), rng.randint(0, 2, 64).astype(np.int32))
        iterator = v1.data.make_initializable_iterator(tf.data.Dataset.from_tensor_slices(data).repeat().batch(4))
        x, y = iterator.get_next()
        global_step = v1.train.get_or_create_global_step()
        outputs, _ = v1.nn.dynamic_rnn(v1.nn.rnn_cell.LSTMCell(8), x, dtype=tf.float32)
        hidden = v1.layers.dropout(v1.layers.batch_normalization(outputs[:, -1], training=True), 0.3, training=True)
        loss = v1.losses.sparse_softmax_cross_entropy(y, v1.layers.dense(hidden, 2))
        summary = v1.summary.scalar("loss", loss)
        optimizer = v1.train.AdamOptimizer(0.01)
        grads = [(tf.clip_by_norm(g, 1.0), v) for g, v in optimizer.compute_gradients(loss)]
        with tf.control_dependencies(v1.get_collection(v1.GraphKeys.UPDATE_OPS)):
            train_op = optimizer.apply_gradients(grads, global_step=global_step)
        init = [v1.global_variables_initializer(), iterator.initializer]
    results = []
    for iterations, runs in ((1, 10), (5, 2)):
        with v1.Session(graph=graph, config=npu_config(iterations_per_loop=iterations)) as sess:
            sess.run(init)
            train = util.set_iteration_per_loop(sess, train_op, iterations)
            for _ in range(runs):
                _, last_loss, last_summary = sess.run([train, loss, summary])
            results.append((last_loss, last_summary, sess.run(global_step), sess.run(v1.global_variables())))
    (ref_loss, ref_summary, ref_step, ref_vars), (loss_value, summary_value, step, variables) = results
    assert step == ref_step == 10
    assert loss_value == ref_loss and summary_value == ref_summary
    for ref, got in zip(ref_vars, variables):
        np.testing.assert_array_equal(got, ref)


def test_the_loop_is_built_by_the_npu_optimizer_pass_and_variables_hold_n_minus_1():
    graph, t = build_model()
    with v1.Session(graph=graph, config=npu_config(iterations_per_loop=4)) as sess:
        sess.run(t["init"])
        train = util.set_iteration_per_loop(sess, t["train_op"], 4)
        assert train.name == "IterationOp"
        metadata = v1.RunMetadata()
        sess.run(train, options=v1.RunOptions(output_partition_graphs=True), run_metadata=metadata)
        executed = {node.name: node for graph_def in metadata.partition_graphs for node in graph_def.node}
        assert executed["npu_iterations_loop/loop_cond"].op == "LoopCond"
        assert executed["IterationOp"].op == "NoOp"  # the fetched op now runs after the loop
        assert "IterationOpGuard" not in executed
        loop_vars = {v.op.name: v for v in graph.get_collection(v1.GraphKeys.LOCAL_VARIABLES)}
        assert sess.run(loop_vars["npu_runconfig/iterations_per_loop"]) == 3
        assert sess.run(t["global_step"]) == 4


def test_runs_without_the_iteration_op_perform_one_step():
    graph, t = build_model()
    with v1.Session(graph=graph, config=npu_config(iterations_per_loop=10)) as sess:
        sess.run(t["init"])
        train = util.set_iteration_per_loop(sess, t["train_op"], 10)
        sess.run(train)
        assert list(sess.run(t["x"])) == [20.0, 21.0]  # 10 batches went to training, this is the 11th
        sess.run(t["train_op"])  # the plain train op is one step
        assert sess.run(t["global_step"]) == 11


def test_fed_placeholder_is_the_same_batch_for_every_step():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2])
        total = v1.get_variable("total", initializer=0.0)
        train_op = v1.assign_add(total, tf.reduce_sum(x)).op
    with v1.Session(graph=graph, config=npu_config(iterations_per_loop=3)) as sess:
        sess.run(total.initializer)
        train = util.set_iteration_per_loop(sess, train_op, 3)
        sess.run(train, {x: [1.0, 2.0]})
        assert sess.run(total) == 9.0


def test_fetched_ref_and_multi_output_values_come_from_the_last_step():
    graph = tf.Graph()
    with graph.as_default():
        counter = v1.get_variable("counter", initializer=0.0, use_resource=False)
        increment = v1.assign_add(counter, 1.0)  # a ref-typed output
        parts = tf.split(tf.stack([increment, increment * 10.0]), 2)  # two outputs of one op
        train_op = increment.op
    with v1.Session(graph=graph, config=npu_config(iterations_per_loop=4)) as sess:
        sess.run(counter.initializer)
        train = util.set_iteration_per_loop(sess, train_op, 4)
        _, value, first, second = sess.run([train, increment, parts[0], parts[1]])
        assert value == 4.0 and list(first) == [4.0] and list(second) == [40.0]
        assert sess.run(counter) == 4.0


def test_input_ending_inside_the_loop_raises_out_of_range_after_the_steps_it_ran():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.data.make_one_shot_iterator(tf.data.Dataset.range(7)).get_next()
        seen = v1.get_variable("seen", initializer=tf.constant(0, tf.int64))
        train_op = v1.assign_add(seen, x * 0 + 1).op  # a step needs its element
    with v1.Session(graph=graph, config=npu_config(iterations_per_loop=5)) as sess:
        sess.run(seen.initializer)
        train = util.set_iteration_per_loop(sess, train_op, 5)
        sess.run(train)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(train)
        assert sess.run(seen) == 7


def test_iteration_op_in_a_session_with_iterations_per_loop_1_fails_clearly():
    graph, t = build_model()
    with graph.as_default():
        train = util.IterationPerLoop().create_iteration_per_loop_var(t["train_op"])
    with v1.Session(graph=graph, config=npu_config()) as sess:
        sess.run(t["init"])
        with pytest.raises(tf.errors.FailedPreconditionError, match="iterations_per_loop > 1"):
            sess.run(train)
        assert sess.run(t["global_step"]) == 0


def test_iteration_op_in_a_plain_session_fails_clearly():
    graph, t = build_model()
    with graph.as_default():
        train = util.IterationPerLoop().create_iteration_per_loop_var(t["train_op"])
    with v1.Session(graph=graph) as sess:
        sess.run(t["init"])
        with pytest.raises(tf.errors.FailedPreconditionError, match="no loop was built"):
            sess.run(train)


def test_feeding_a_per_step_tensor_fails_with_the_pass_reason():
    graph, t = build_model()
    with v1.Session(graph=graph, config=npu_config(iterations_per_loop=2)) as sess:
        sess.run(t["init"])
        train = util.set_iteration_per_loop(sess, t["train_op"], 2)
        with pytest.raises(tf.errors.FailedPreconditionError, match="could not build the training loop.*feeds"):
            sess.run(train, {t["x"]: [1.0, 1.0]})


def test_session_and_call_must_agree():
    graph, t = build_model()
    with v1.Session(graph=graph, config=npu_config(iterations_per_loop=10)) as sess:
        with pytest.raises(
            NpuOptionError,
            match="iterations_per_loop=5 but the session's NpuOptimizer config sets iterations_per_loop=10",
        ):
            util.set_iteration_per_loop(sess, t["train_op"], 5)
    with v1.Session(graph=graph) as sess:
        with pytest.raises(NpuOptionError, match="no NpuOptimizer entry"):
            util.set_iteration_per_loop(sess, t["train_op"], 5)


@pytest.mark.parametrize(
    "value, error, message",
    [
        (0, ValueError, "iterations_per_loop must be positive, got 0"),
        ("10", TypeError, "iterations_per_loop must be int"),
        (True, TypeError, "iterations_per_loop must be int"),
    ],
)
def test_bad_iteration_counts(value, error, message):
    graph, t = build_model()
    with v1.Session(graph=graph, config=npu_config(iterations_per_loop=2)) as sess:
        with pytest.raises(error, match=message):
            util.set_iteration_per_loop(sess, t["train_op"], value)
    with pytest.raises(error, match=message):
        npu_hook.SetIterationsVarHook(value)


def test_iterations_1_returns_the_train_op_and_a_tensor_is_rejected():
    graph, t = build_model()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        assert util.set_iteration_per_loop(sess, t["train_op"], 1) is t["train_op"]
    with graph.as_default(), pytest.raises(ValueError, match="train_op must be a tf.Operation"):
        util.IterationPerLoop().create_iteration_per_loop_var(t["loss"])


def test_monitored_session_with_set_iterations_var_hook():
    graph, t = build_model(optimizer="sgd")
    with graph.as_default():
        train = util.IterationPerLoop().create_iteration_per_loop_var(t["train_op"])
        hooks = [npu_hook.SetIterationsVarHook(8), v1.train.StopAtStepHook(last_step=20)]
        scaffold = v1.train.Scaffold(local_init_op=tf.group(v1.local_variables_initializer(), t["init"][2]))
        runs = 0
        with v1.train.MonitoredTrainingSession(
            config=npu_config(iterations_per_loop=8), hooks=hooks, scaffold=scaffold
        ) as sess:
            while not sess.should_stop():
                _, step = sess.run([train, t["global_step"]])
                runs += 1
    assert runs == 3 and step in (23, 24)  # 3 loops of 8 steps; the read races with the last increment
