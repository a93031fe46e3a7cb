"""The TF1 mode's ``tf.contrib.cudnn_rnn``, ``contrib.recurrent``, ``contrib.all_reduce``, ``contrib.compiler``,
``contrib.estimator.clip_gradients_by_norm``, ``contrib.opt.ScipyOptimizerInterface``,
``contrib.training.FeedingQueueRunner``, ``contrib.framework``'s ``tensor_util`` and ``contrib.util``, and the moved
names ``gen_nn_ops._max_pool_grad`` / ``gradients_impl._AggregateIndexedSlicesGradients``: values against NumPy
references written here, and errors naming their argument."""

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NotAvailableError, NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1 import aliases, all_reduce, contrib, contrib_tensor_util, cudnn_rnn, functional_rnn
from npu_bridge.core.tf1.feeding_queue_runner import FeedingQueueRunner
from npu_bridge.core.tf1.gradient_transforms import clip_gradients_by_norm
from npu_bridge.core.tf1.indexed_slices_gradients import _AggregateIndexedSlicesGradients
from npu_bridge.core.tf1.optimizers import ScipyOptimizerInterface

RNG = np.random.RandomState(5)
v1 = tf.compat.v1


def run(fetches, feed=None, config=None):
    with v1.Session(config=config) as session:
        session.run(v1.global_variables_initializer())
        return session.run(fetches, feed)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm_reference(x, lengths, kernel, bias, h, c):
    """cuDNN's LSTM on canonical weights, one direction, time-major: gates i, c~, f, o, no forget bias."""
    outputs = np.zeros(x.shape[:2] + (h.shape[-1],), np.float64)
    for t in range(x.shape[0]):
        gates = np.concatenate([x[t], h], 1) @ kernel + bias
        i, j, f, o = np.split(gates, 4, axis=1)
        new_c = sigmoid(f) * c + sigmoid(i) * np.tanh(j)
        new_h = sigmoid(o) * np.tanh(new_c)
        alive = (t < lengths)[:, None]
        c, h = np.where(alive, new_c, c), np.where(alive, new_h, h)
        outputs[t] = np.where(alive, new_h, 0)
    return outputs, h, c


def gru_reference(x, lengths, weights, h):
    """cuDNN's GRU: h~ = tanh(x W + b_x + r * (h R + b_h)), h' = (1 - u) h~ + u h."""
    gate_kernel, gate_bias, input_kernel, hidden_kernel, input_bias, hidden_bias = weights
    outputs = np.zeros(x.shape[:2] + (h.shape[-1],), np.float64)
    for t in range(x.shape[0]):
        r, u = np.split(sigmoid(np.concatenate([x[t], h], 1) @ gate_kernel + gate_bias), 2, axis=1)
        candidate = np.tanh(x[t] @ input_kernel + input_bias + r * (h @ hidden_kernel + hidden_bias))
        new_h = (1 - u) * candidate + u * h
        alive = (t < lengths)[:, None]
        h = np.where(alive, new_h, h)
        outputs[t] = np.where(alive, new_h, 0)
    return outputs, h


def reversed_in_length(x, lengths):
    y = x.copy()
    for b, n in enumerate(lengths):
        y[:n, b] = x[:n, b][::-1]
    return y


def stacked_reference(x, lengths, weights_by_layer, step, units):
    """Runs each layer (both ways when it has two weight sets) the way cuDNN stacks them; returns outputs and the
    final states by layer * num_dirs + direction."""
    finals, layer_input = [], x
    for weights in weights_by_layer:
        outs = []
        for way, w in enumerate(weights):
            source = reversed_in_length(layer_input, lengths) if way else layer_input
            result = step(source, lengths, w, units)
            outs.append(reversed_in_length(result[0], lengths) if way else result[0])
            finals.append(result[1:])
        layer_input = np.concatenate(outs, 2)
    return layer_input, finals


def lstm_layer(x, lengths, weights, units):
    zeros = np.zeros((x.shape[1], units))
    return lstm_reference(x, lengths, weights[0], weights[1], zeros, zeros)


def gru_layer(x, lengths, weights, units):
    return gru_reference(x, lengths, weights, np.zeros((x.shape[1], units)))


# ---------------------------------------------------------------- cudnn_rnn


@pytest.mark.parametrize("direction", ["unidirectional", "bidirectional"])
def test_cudnn_lstm_computes_the_lstm_of_its_canonical_weights_by_hand(direction):
    x = RNG.randn(5, 3, 4).astype(np.float32)
    lengths = np.array([5, 3, 1])
    with tf.Graph().as_default():
        layer = cudnn_rnn.CudnnLSTM(2, 6, direction=direction, bias_initializer=v1.random_normal_initializer())
        outputs, (h, c) = layer(tf.constant(x), sequence_lengths=lengths)
        got, got_h, got_c, weights = run([outputs, h, c, layer.canonical_variables])
    dirs = 2 if direction == "bidirectional" else 1
    by_layer = [weights[i * dirs : (i + 1) * dirs] for i in range(2)]
    want, finals = stacked_reference(x.astype(np.float64), lengths, by_layer, lstm_layer, 6)
    assert got.shape == (5, 3, 6 * dirs) and got_h.shape == (2 * dirs, 3, 6)
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(got_h, np.stack([f[0] for f in finals]), atol=1e-5)
    np.testing.assert_allclose(got_c, np.stack([f[1] for f in finals]), atol=1e-5)


def test_cudnn_gru_computes_cudnns_gru_and_takes_batch_major_inputs_and_initial_states():
    x = RNG.randn(2, 4, 3).astype(np.float32)  # batch-major
    h0 = RNG.randn(2, 1, 5).astype(np.float32)  # [batch, layers * dirs, units]
    with tf.Graph().as_default():
        layer = cudnn_rnn.CudnnGRU(1, 5, bias_initializer=v1.random_normal_initializer())
        outputs, (h,) = layer(tf.constant(x), initial_state=(tf.constant(h0),), time_major=False)
        got, got_h, weights = run([outputs, h, layer.canonical_variables])
    want, want_h = gru_reference(x.transpose(1, 0, 2), np.array([4, 4]), weights[0], h0[:, 0])
    np.testing.assert_allclose(got, want.transpose(1, 0, 2), atol=1e-5)
    np.testing.assert_allclose(got_h[:, 0], want_h, atol=1e-5)


def test_cudnn_lstm_variables_have_the_canonical_names_and_load_into_cudnn_compatible_cells(tmp_path):
    x = RNG.randn(4, 2, 3).astype(np.float32)
    with tf.Graph().as_default():
        layer = cudnn_rnn.CudnnLSTM(2, 5)
        outputs, _ = layer(tf.constant(x))
        names = [v.op.name for v in v1.global_variables()]
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            want = session.run(outputs)
            v1.train.Saver().save(session, str(tmp_path / "model"))
    assert names == [
        f"cudnn_lstm/rnn/multi_rnn_cell/cell_{k}/cudnn_compatible_lstm_cell/{v}"
        for k in (0, 1)
        for v in ("kernel", "bias")
    ]
    with tf.Graph().as_default():
        cells = v1.nn.rnn_cell.MultiRNNCell([cudnn_rnn.CudnnCompatibleLSTMCell(5) for _ in range(2)])
        with v1.variable_scope("cudnn_lstm"):
            outputs, _ = v1.nn.dynamic_rnn(cells, tf.constant(x), dtype=tf.float32, time_major=True)
        with v1.Session() as session:
            v1.train.Saver().restore(session, str(tmp_path / "model"))
            np.testing.assert_allclose(session.run(outputs), want, atol=1e-6)


def test_cudnn_compatible_gru_cell_computes_cudnns_gru():
    x = RNG.randn(3, 2, 4).astype(np.float32)
    with tf.Graph().as_default():
        cell = cudnn_rnn.CudnnCompatibleGRUCell(3)
        outputs, state = v1.nn.dynamic_rnn(cell, tf.constant(x), dtype=tf.float32, time_major=True)
        names = [v.op.name for v in v1.global_variables()]
        got, got_state, weights = run([outputs, state, v1.global_variables()])
    assert names[0] == "rnn/cudnn_compatible_gru_cell/gates/kernel"
    want, want_h = gru_reference(x.astype(np.float64), np.array([3, 3]), weights, np.zeros((2, 3)))
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(got_state, want_h, atol=1e-5)


def test_cudnn_dropout_applies_between_layers_only_when_training():
    x = np.ones((3, 2, 4), np.float32)
    with tf.Graph().as_default():
        layer = cudnn_rnn.CudnnLSTM(2, 4, dropout=0.5, seed=1)
        inference, _ = layer(tf.constant(x), training=False)
        one_layer = cudnn_rnn.CudnnLSTM(1, 4, dropout=0.5, seed=1)
        single_train, _ = one_layer(tf.constant(x), training=True)
        single_infer, _ = one_layer(tf.constant(x), training=False)
        trained, _ = layer(tf.constant(x), training=True)
        a, b, c, d = run([inference, trained, single_train, single_infer])
    assert not np.allclose(a, b)  # the second layer read dropped-out inputs
    np.testing.assert_allclose(c, d)  # one layer: nothing to drop between


def test_cudnn_layers_name_what_is_wrong():
    with pytest.raises(NpuArgumentError, match=r"direction must be one of \['unidirectional', 'bidirectional'\]"):
        cudnn_rnn.CudnnLSTM(1, 4, direction="both")
    with pytest.raises(NotAvailableError, match="skip_input"):
        cudnn_rnn.CudnnGRU(1, 4, input_mode="skip_input")
    with pytest.raises(NpuArgumentError, match="dtype must be float16, float32 or float64, got int32"):
        cudnn_rnn.CudnnLSTM(1, 4, dtype=tf.int32)
    with pytest.raises(NpuArgumentTypeError, match="num_units must be an int"):
        cudnn_rnn.CudnnLSTM(1, 4.5)
    with pytest.raises(NpuArgumentError, match=r"dropout must be a number in \[0, 1\], got 2"):
        cudnn_rnn.CudnnLSTM(1, 4, dropout=2)
    with tf.Graph().as_default():
        layer = cudnn_rnn.CudnnLSTM(1, 4)
        with pytest.raises(NpuArgumentTypeError, match=r"initial_state must be a tuple \(\(h, c\)\)"):
            layer(tf.zeros([2, 1, 3]), initial_state=[tf.zeros([1, 1, 4])] * 2)
        with pytest.raises(NpuArgumentError, match="must have 3 dimensions"):
            cudnn_rnn.CudnnGRU(1, 4)(tf.zeros([2, 3]))
        with pytest.raises(NotAvailableError, match="auto_select"):
            cudnn_rnn.CudnnGRU(1, 3, input_mode="auto_select")(tf.zeros([2, 1, 3]))


# ---------------------------------------------------------------- recurrent


def test_functional_rnn_and_its_bidirectional_form_give_dynamic_rnns_results():
    x = RNG.randn(3, 5, 2).astype(np.float32)  # batch-major
    lengths = [5, 2, 4]
    with tf.Graph().as_default():
        cell = v1.nn.rnn_cell.GRUCell(3)
        ours = functional_rnn.functional_rnn(cell, tf.constant(x), sequence_length=lengths, dtype=tf.float32)
        theirs = v1.nn.dynamic_rnn(cell, tf.constant(x), sequence_length=lengths, dtype=tf.float32)
        fw, bw = v1.nn.rnn_cell.LSTMCell(2), v1.nn.rnn_cell.LSTMCell(2)
        both = functional_rnn.bidirectional_functional_rnn(
            fw, bw, tf.constant(x), dtype=tf.float32, sequence_length=lengths
        )
        # the same (built) cells: their weights
        reference = v1.nn.bidirectional_dynamic_rnn(fw, bw, tf.constant(x), dtype=tf.float32, sequence_length=lengths)
        names = sorted(v.op.name for v in v1.global_variables())
        got, want, got_both, want_both = run([ours, theirs, both, reference])
    np.testing.assert_allclose(got[0], want[0], atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], atol=1e-6)
    for a, b in zip(tf.nest.flatten(got_both), tf.nest.flatten(want_both)):
        np.testing.assert_allclose(a, b, atol=1e-6)
    assert "bidirectional_rnn/fw/lstm_cell/kernel" in names and "rnn/gru_cell/gates/kernel" in names


def test_functional_rnn_reverse_reads_the_inputs_backwards_and_returns_outputs_in_input_order():
    x = RNG.randn(4, 2, 1).astype(np.float32)  # time-major
    with tf.Graph().as_default():
        cell = v1.nn.rnn_cell.BasicRNNCell(2)
        got, state = functional_rnn.functional_rnn(
            cell, tf.constant(x), dtype=tf.float32, time_major=True, reverse=True
        )
        forward, forward_state = v1.nn.dynamic_rnn(cell, tf.constant(x[::-1].copy()), dtype=tf.float32, time_major=True)
        a, s, b, t = run([got, state, forward, forward_state])
    np.testing.assert_allclose(a, b[::-1], atol=1e-6)
    np.testing.assert_allclose(s, t, atol=1e-6)


# ---------------------------------------------------------------- all_reduce

DEVICES = [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(4)]
FOUR_CPUS = v1.ConfigProto(device_count={"CPU": 4})


def on_devices(values):
    tensors = []
    for device, value in zip(DEVICES, values):
        with tf.device(device):
            tensors.append(tf.constant(value))
    return tensors


@pytest.mark.parametrize(
    "build",
    [
        lambda t: all_reduce.build_ring_all_reduce(t, 1, 2, [0, 1, 2, 3], tf.add),
        lambda t: all_reduce.build_ring_all_reduce(t, 2, 1, [1, 0], tf.add),
        lambda t: all_reduce.build_recursive_hd_all_reduce(t, tf.add),
        lambda t: all_reduce.build_shuffle_all_reduce(t, DEVICES[:3], tf.add_n),
        lambda t: all_reduce.build_nccl_all_reduce(t, tf.add),
        lambda t: all_reduce.build_nccl_then_ring(t, 1, tf.add),
        lambda t: all_reduce.build_nccl_then_recursive_hd(t, tf.add),
        lambda t: all_reduce.build_nccl_then_shuffle(t, DEVICES[:1], tf.add, tf.add_n),
        lambda t: all_reduce.build_shuffle_then_ring(t, DEVICES[:1], 1, tf.add_n, tf.add),
        lambda t: all_reduce.build_shuffle_then_shuffle(t, DEVICES[:1], DEVICES[:2], tf.add_n),
    ],
)
def test_every_all_reduce_builder_puts_the_sum_on_every_device(build):
    values = [RNG.randn(3, 5).astype(np.float32) for _ in range(4)]
    with tf.Graph().as_default():
        outputs = build(on_devices(values))
        assert [o.device for o in outputs] == DEVICES
        got = run(outputs, config=FOUR_CPUS)
    for result in got:
        np.testing.assert_allclose(result, sum(values), atol=1e-5)


def test_ring_all_reduce_applies_un_op_and_names_bad_arguments():
    values = [np.arange(7, dtype=np.float32) * (i + 1) for i in range(4)]  # 7 elements: chunks need padding
    with tf.Graph().as_default():
        outputs = all_reduce.build_ring_all_reduce(on_devices(values), 1, 1, [3, 1, 0, 2], tf.add, lambda x: x / 4)
        for result in run(outputs, config=FOUR_CPUS):
            np.testing.assert_allclose(result, np.arange(7) * 2.5)
        tensors = on_devices(values)
        with pytest.raises(NpuArgumentError, match="must hold at least 2 tensor"):
            all_reduce.build_ring_all_reduce(tensors[:1], 1, 1, [0], tf.add)
        with pytest.raises(NpuArgumentError, match=r"num_workers \* len\(gpu_perm\) = 2 tensors, got 4"):
            all_reduce.build_ring_all_reduce(tensors, 1, 1, [0, 1], tf.add)
        with pytest.raises(NpuArgumentError, match="red_op of an NCCL all-reduce must be tf.add"):
            all_reduce.build_nccl_all_reduce(tensors, tf.multiply)
        with pytest.raises(NpuArgumentError, match="power of 2 of input_tensors, got 3"):
            all_reduce.build_recursive_hd_all_reduce(tensors[:3], tf.add)
        with pytest.raises(NpuArgumentError, match=r"tensor 1 has \(2,\)"):
            all_reduce.build_nccl_all_reduce([tf.zeros([3]), tf.zeros([2])], tf.add)


# ---------------------------------------------------------------- estimator, opt, training


def test_clip_gradients_by_norm_clips_the_global_norm_of_the_wrapped_optimizers_gradients():
    with tf.Graph().as_default():
        var = v1.get_variable("w", initializer=[0.0, 0.0])
        loss = tf.reduce_sum(tf.constant([3.0, 4.0]) * var)  # gradient [3, 4], global norm 5
        optimizer = clip_gradients_by_norm(v1.train.GradientDescentOptimizer(1.0), clip_norm=1.0)
        step = optimizer.minimize(loss)
        assert optimizer.get_name() == "ClipByNormGradientDescent"
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            session.run(step)
            np.testing.assert_allclose(session.run(var), [-0.6, -0.8], atol=1e-6)
    with pytest.raises(NpuArgumentTypeError, match="optimizer must be a tf.compat.v1.train.Optimizer"):
        clip_gradients_by_norm("sgd", 1.0)
    with pytest.raises(NpuArgumentError, match="clip_norm must be positive, got 0"):
        clip_gradients_by_norm(v1.train.GradientDescentOptimizer(1.0), 0)


def test_scipy_optimizer_interface_minimizes_a_quadratic_within_bounds_and_calls_back():
    with tf.Graph().as_default():
        vector = v1.get_variable("vector", initializer=[7.0, 7.0, 7.0])
        unused = v1.get_variable("unused", initializer=[1.0])
        target = v1.placeholder(tf.float32, [3])
        loss = tf.reduce_sum(tf.square(vector - target))
        optimizer = ScipyOptimizerInterface(
            loss, var_list=[vector, unused], var_to_bounds={vector: ([-10, -10, 2.5], np.inf)}, options={"maxiter": 100}
        )
        losses, steps = [], []
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            optimizer.minimize(
                session,
                feed_dict={target: [1.0, -2.0, 0.0]},
                fetches=[loss],
                loss_callback=losses.append,
                step_callback=steps.append,
            )
            np.testing.assert_allclose(session.run(vector), [1.0, -2.0, 2.5], atol=1e-4)
            np.testing.assert_allclose(session.run(unused), [1.0])
    assert losses[0] == pytest.approx(36 + 81 + 49) and losses[-1] == pytest.approx(6.25, abs=1e-3) and steps
    with tf.Graph().as_default():
        var = v1.get_variable("v", initializer=[1.0])
        bad = ScipyOptimizerInterface(tf.reduce_sum(var * var), bounds=[(0, 1)])
        with v1.Session() as session, pytest.raises(NpuArgumentError, match="'bounds' cannot be passed"):
            session.run(v1.global_variables_initializer())
            bad.minimize(session)


def test_feeding_queue_runner_enqueues_what_its_feed_function_returns():
    with tf.Graph().as_default():
        value = v1.placeholder(tf.int64, [])
        queue = v1.FIFOQueue(10, [tf.int64], shapes=[[]])
        counter = iter(range(100))
        runner = FeedingQueueRunner(queue, [queue.enqueue(value)], feed_fns=[lambda: {value: next(counter)}])
        v1.train.add_queue_runner(runner)
        dequeued = queue.dequeue()
        with v1.Session() as session:
            coord = v1.train.Coordinator()
            threads = v1.train.start_queue_runners(session, coord=coord)
            got = [session.run(dequeued) for _ in range(5)]
            coord.request_stop()
            session.run(queue.close(cancel_pending_enqueues=True))
            coord.join(threads)
    assert got == [0, 1, 2, 3, 4]
    with pytest.raises(NpuArgumentError, match=r"one function per enqueue op \(1\), got 2"):
        FeedingQueueRunner(queue, [queue.enqueue(value)], feed_fns=[dict, dict])


# ---------------------------------------------------------------- tensor_util, util, moved names


def test_with_same_shape_checks_statically_and_at_run_time():
    with tf.Graph().as_default():
        a, b = tf.zeros([2, 3]), tf.ones([2, 3])
        assert contrib_tensor_util.with_same_shape(a, b) is b
        assert contrib_tensor_util.with_shape(tf.TensorShape([None, 3]), b) is b  # None: any size
        with pytest.raises(NpuArgumentError, match=r"must have shape \[3, 2\], got \[2, 3\]"):
            contrib_tensor_util.with_same_shape(tf.zeros([3, 2]), b)
        unknown = v1.placeholder(tf.float32, [None, 3])
        checked = contrib_tensor_util.with_same_shape(a, unknown)
        assert checked.shape.as_list() == [2, 3]
        with v1.Session() as session:
            assert session.run(checked, {unknown: np.ones([2, 3])}).shape == (2, 3)
            with pytest.raises(tf.errors.InvalidArgumentError, match="Wrong shape"):
                session.run(checked, {unknown: np.ones([4, 3])})


def test_tensor_util_argument_errors_keep_tf115_wording():
    # scripts and TF 1.15's own checks match these phrases ("Invalid rank", "Invalid dtype", "Expected integer")
    with tf.Graph().as_default():
        t = tf.zeros([4])
        with pytest.raises(NpuArgumentError, match="Invalid rank"):
            contrib_tensor_util.with_shape([[4], [1]], t)
        with pytest.raises(NpuArgumentError, match="Invalid dtype"):
            contrib_tensor_util.with_shape([4.5], t)
        with pytest.raises(NpuArgumentError, match="Expected integer"):
            contrib_tensor_util.assert_scalar_int(tf.constant(2.5))
        contrib_tensor_util.assert_scalar_int(tf.constant(7))


def test_aggregate_indexed_slices_gradients_concatenates_the_towers_slices():
    with tf.Graph().as_default():
        t0 = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([0, 2]), tf.constant([3, 2]))
        dense = tf.constant([[0.0, 0.0], [5.0, 6.0], [7.0, 8.0]])
        total = _AggregateIndexedSlicesGradients([t0, dense, None])
        assert _AggregateIndexedSlicesGradients([]) is None and _AggregateIndexedSlicesGradients([t0]) is t0
        got = run(tf.convert_to_tensor(total))
    np.testing.assert_allclose(got, [[1, 2], [5, 6], [10, 12]])


def test_contrib_paths_of_these_modules_resolve_and_compute(caplog):
    root = contrib.ContribModule("", None, tf)
    assert root.cudnn_rnn.python.layers.cudnn_rnn.CUDNN_RNN_BIDIRECTION == "bidirectional"
    assert root.cudnn_rnn.CudnnLSTM is cudnn_rnn.CudnnLSTM
    assert "no opaque_kernel" in caplog.text  # said once, when first used
    assert root.recurrent.functional_rnn is functional_rnn.functional_rnn
    assert root.all_reduce.python.all_reduce.build_ring_all_reduce is all_reduce.build_ring_all_reduce
    assert root.estimator.clip_gradients_by_norm is clip_gradients_by_norm
    assert root.opt.ScipyOptimizerInterface is ScipyOptimizerInterface
    assert root.training.FeedingQueueRunner is FeedingQueueRunner
    assert root.framework.python.framework.tensor_util.with_same_shape is contrib_tensor_util.with_same_shape
    aliases.add()
    from tensorflow.python.ops import gen_nn_ops, gradients_impl

    assert gen_nn_ops._max_pool_grad is gen_nn_ops.max_pool_grad
    assert gradients_impl._AggregateIndexedSlicesGradients is _AggregateIndexedSlicesGradients
    with tf.Graph().as_default():
        assert root.util.constant_value(tf.constant([1, 2])).tolist() == [1, 2]
        (compiled,) = root.compiler.xla.compile(lambda x: x * 2 + 1, [tf.constant([1.0, 2.0])])
        with root.compiler.jit.experimental_jit_scope():
            jitted = tf.constant([3.0]) * 2
        got, twice = run([compiled, jitted])
    np.testing.assert_allclose(got, [3.0, 5.0])
    np.testing.assert_allclose(twice, [6.0])
