"""tf.contrib.seq2seq and tf.contrib.legacy_seq2seq of the TF1 mode (npu_bridge.core.tf1.seq2seq, .legacy_seq2seq):
values computed by hand or NumPy, TensorFlow 1.15's variable names, errors naming the bad argument."""

import itertools

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1 import contrib, seq2seq
from npu_bridge.core.tf1 import legacy_seq2seq as legacy

RNG = np.random.RandomState(5)


@pytest.fixture(autouse=True)
def graph():
    """A fresh graph with v1 control flow, as the TF1 mode builds (v2 behaviour disabled); restored afterwards."""
    enabled = tf.compat.v1.control_flow_v2_enabled()
    tf.compat.v1.disable_control_flow_v2()
    with tf.Graph().as_default() as g:
        yield g
    (tf.compat.v1.enable_control_flow_v2 if enabled else tf.compat.v1.disable_control_flow_v2)()


def use_control_flow(version):
    """Tests that also hold with v2 control flow (a graph built outside the mode) switch it on; ``graph`` restores."""
    if version == 2:
        tf.compat.v1.enable_control_flow_v2()


def run(fetches, feed_dict=None):
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def variable_names():
    return sorted(v.op.name for v in tf.compat.v1.global_variables())


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class ScriptedCell(tf.compat.v1.nn.rnn_cell.RNNCell):
    """Emits logits 10 * one_hot(script[b, t]) at step t, whatever its inputs: a decoder whose choices are known."""

    def __init__(self, script, vocab):
        super().__init__()
        self._script = tf.constant(script, tf.int32)
        self._last = script.shape[1] - 1
        self._vocab = vocab

    @property
    def state_size(self):
        return 1

    @property
    def output_size(self):
        return self._vocab

    def call(self, inputs, state):
        step = tf.cast(state[:, 0], tf.int32)
        rows = tf.range(tf.shape(state)[0])
        tokens = tf.gather_nd(self._script, tf.stack([rows, tf.minimum(step, self._last)], 1))
        return 10.0 * tf.one_hot(tokens, self._vocab), state + 1.0


class BigramCell(tf.compat.v1.nn.rnn_cell.RNNCell):
    """Outputs log P(next | previous token): inputs are one-hot previous tokens, ``table`` [vocab, vocab]."""

    def __init__(self, table):
        super().__init__()
        self._log_table = tf.constant(np.log(table), tf.float32)

    @property
    def state_size(self):
        return 1

    @property
    def output_size(self):
        return self._log_table.shape[1]

    def call(self, inputs, state):
        return tf.matmul(inputs, self._log_table), state


def test_basic_decoder_with_a_training_helper_is_the_rnn_and_output_layer_of_numpy():
    batch, steps, depth, units, vocab = 3, 4, 2, 5, 6
    lengths = np.array([4, 2, 1], np.int32)
    inputs = RNG.randn(batch, steps, depth).astype(np.float32)
    cell = tf.compat.v1.nn.rnn_cell.BasicRNNCell(units)
    layer = tf.compat.v1.layers.Dense(vocab, name="projection")
    helper = seq2seq.TrainingHelper(tf.constant(inputs), tf.constant(lengths))
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(batch, tf.float32), output_layer=layer)
    outputs, state, got_lengths = seq2seq.dynamic_decode(decoder, impute_finished=True)
    assert isinstance(outputs, seq2seq.BasicDecoderOutput)
    assert variable_names() == [
        "decoder/basic_rnn_cell/bias",
        "decoder/basic_rnn_cell/kernel",
        "decoder/projection/bias",
        "decoder/projection/kernel",
    ]
    weights = {v.op.name.split("/", 1)[1]: v for v in tf.compat.v1.global_variables()}
    got = run({"outputs": outputs, "state": state, "lengths": got_lengths, "vars": weights})
    kernel, bias = got["vars"]["basic_rnn_cell/kernel"], got["vars"]["basic_rnn_cell/bias"]
    p_kernel, p_bias = got["vars"]["projection/kernel"], got["vars"]["projection/bias"]
    h = np.zeros((batch, units), np.float32)
    expected = np.zeros((batch, steps, vocab), np.float32)
    for t in range(steps):
        new_h = np.tanh(np.concatenate([inputs[:, t], h], 1) @ kernel + bias)
        live = t < lengths
        expected[live, t] = (new_h @ p_kernel + p_bias)[live]
        h = np.where(live[:, None], new_h, h)  # impute_finished copies the state through
    np.testing.assert_array_equal(got["lengths"], lengths)
    np.testing.assert_allclose(got["outputs"].rnn_output, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(
        got["outputs"].sample_id[lengths[:, None] > np.arange(steps)],
        expected.argmax(-1)[lengths[:, None] > np.arange(steps)],
    )
    np.testing.assert_allclose(got["state"], h, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("control_flow", [1, 2])
def test_greedy_decoding_stops_at_the_end_token_and_counts_it_in_the_lengths(control_flow):
    use_control_flow(control_flow)
    end, vocab = 0, 5
    script = np.array([[3, 1, 0, 4, 4], [2, 0, 3, 3, 3], [4, 4, 4, 4, 4]], np.int32)
    cell = ScriptedCell(script, vocab)
    helper = seq2seq.GreedyEmbeddingHelper(tf.eye(vocab), tf.fill([3], 1), end)
    decoder = seq2seq.BasicDecoder(cell, helper, tf.zeros([3, 1]))
    outputs, _, lengths = seq2seq.dynamic_decode(decoder, maximum_iterations=4)
    time_major, _, _ = seq2seq.dynamic_decode(decoder, output_time_major=True, maximum_iterations=4)
    got = run({"ids": outputs.sample_id, "lengths": lengths, "time_major": time_major.sample_id})
    np.testing.assert_array_equal(got["lengths"], [3, 2, 4])  # the third never ends: maximum_iterations stops it
    np.testing.assert_array_equal(got["ids"], script[:, :4])  # decoding runs until every entry is finished
    np.testing.assert_array_equal(got["time_major"], script[:, :4].T)


def test_inference_and_custom_helpers_feed_back_what_their_functions_make():
    script = np.array([[2, 2, 1], [1, 2, 2]], np.int32)
    cell = ScriptedCell(script, 3)
    helper = seq2seq.InferenceHelper(
        sample_fn=lambda outputs: tf.argmax(outputs, -1, output_type=tf.int32),
        sample_shape=[],
        sample_dtype=tf.int32,
        start_inputs=tf.zeros([2, 3]),
        end_fn=lambda ids: tf.equal(ids, 1),
        next_inputs_fn=lambda ids: tf.one_hot(ids, 3),
    )
    outputs, _, lengths = seq2seq.dynamic_decode(seq2seq.BasicDecoder(cell, helper, tf.zeros([2, 1])))
    got = run({"ids": outputs.sample_id, "lengths": lengths})
    np.testing.assert_array_equal(got["lengths"], [3, 1])
    np.testing.assert_array_equal(got["ids"], script)


def brute_force_best(table, go, end, steps):
    """Every sequence of at most ``steps`` tokens ending with ``end`` and its log probability, the best first."""
    best = {}
    for length in range(1, steps + 1):
        for tokens in itertools.product(range(table.shape[0]), repeat=length):
            if end in tokens[:-1] or tokens[-1] != end:
                continue
            previous = (go, *tokens[:-1])
            best[tokens] = sum(np.log(table[p, t]) for p, t in zip(previous, tokens))
    return sorted(best.items(), key=lambda item: -item[1])


@pytest.mark.parametrize("control_flow", [1, 2])
def test_beam_search_finds_the_best_sequence_greedy_decoding_misses(control_flow):
    use_control_flow(control_flow)
    # tokens: 0 "a", 1 "b", 2 end, 3 go. Greedy takes "a" (0.55) first; "b end" (0.45 * 0.9) is best.
    table = np.array(
        [
            [0.40, 0.30, 0.30, 1e-9],  # after a
            [0.05, 0.05, 0.90, 1e-9],  # after b
            [1e-9, 1e-9, 1.00, 1e-9],  # after end
            [0.55, 0.45, 1e-9, 1e-9],  # after go
        ]
    )
    table = table / table.sum(1, keepdims=True)
    cell = BigramCell(table)
    beam_width, steps = 2, 4
    decoder = seq2seq.BeamSearchDecoder(
        cell, tf.eye(4), tf.fill([1], 3), 2, seq2seq.tile_batch(tf.zeros([1, 1]), beam_width), beam_width
    )
    outputs, state, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=steps)
    assert isinstance(outputs, seq2seq.FinalBeamSearchDecoderOutput)
    greedy = seq2seq.BasicDecoder(cell, seq2seq.GreedyEmbeddingHelper(tf.eye(4), tf.fill([1], 3), 2), tf.zeros([1, 1]))
    greedy_outputs, _, _ = seq2seq.dynamic_decode(greedy, maximum_iterations=steps)
    got = run(
        {
            "ids": outputs.predicted_ids,
            "scores": outputs.beam_search_decoder_output.scores,
            "lengths": state.lengths,
            "greedy": greedy_outputs.sample_id,
        }
    )
    ranked = brute_force_best(table, 3, 2, steps)
    assert ranked[0][0] == (1, 2)
    np.testing.assert_array_equal(got["ids"][0, :, 0], [1, 2, 2, 2])  # after the end token: end tokens
    np.testing.assert_allclose(got["scores"][0, -1, 0], ranked[0][1], rtol=1e-5)
    assert got["lengths"][0, 0] == 2  # "b" and the end token
    assert list(got["greedy"][0]) == [0, 0, 0, 0]  # greedy never finds it


def test_beam_search_decoder_v2_is_configured_first_and_decodes_when_called():
    table = np.array([[0.40, 0.30, 0.30, 0.0], [0.05, 0.05, 0.90, 0.0], [0.0, 0.0, 1.0, 0.0], [0.55, 0.45, 0.0, 0.0]])
    table = (table + 1e-9) / (table + 1e-9).sum(1, keepdims=True)
    cell, beam_width = BigramCell(table), 2
    initial = seq2seq.tile_batch(tf.zeros([1, 1]), beam_width)
    v1 = seq2seq.BeamSearchDecoder(cell, tf.eye(4), tf.fill([1], 3), 2, initial, beam_width)
    v1_outputs, _, v1_lengths = seq2seq.dynamic_decode(v1, maximum_iterations=4)
    v2 = seq2seq.BeamSearchDecoderV2(cell, beam_width, maximum_iterations=4, output_time_major=True)
    outputs, state, lengths = v2(tf.eye(4), start_tokens=tf.fill([1], 3), end_token=2, initial_state=initial)
    assert isinstance(outputs, seq2seq.FinalBeamSearchDecoderOutput)
    assert isinstance(state, seq2seq.BeamSearchDecoderState)
    by_function = seq2seq.BeamSearchDecoderV2(
        cell, beam_width, embedding_fn=lambda ids: tf.one_hot(ids, 4), maximum_iterations=4
    )
    function_outputs, _, _ = by_function(None, tf.fill([1], 3), 2, initial)
    got = run(
        {
            "v1": v1_outputs.predicted_ids,
            "v1_lengths": v1_lengths,
            "v2": outputs.predicted_ids,
            "lengths": lengths,
            "by_function": function_outputs.predicted_ids,
        }
    )
    np.testing.assert_array_equal(got["v2"], got["v1"].transpose(1, 0, 2))  # time major as configured
    np.testing.assert_array_equal(got["lengths"], got["v1_lengths"])
    np.testing.assert_array_equal(got["by_function"][0, :2, 0], [1, 2])  # "b", end: the best sequence
    with pytest.raises(NpuArgumentTypeError, match="embedding_fn must be callable, got 3"):
        seq2seq.BeamSearchDecoderV2(cell, beam_width, embedding_fn=3)


def test_beam_search_with_a_length_penalty_prefers_longer_sequences_as_wu_et_al():
    log_probs, lengths = np.log(np.array([0.5, 0.45])), np.array([1, 3])
    weight = 1.0
    expected = log_probs / ((5.0 + lengths) / 6.0) ** weight
    from npu_bridge.core.tf1.seq2seq import beam_search

    got = run(beam_search._scores(tf.constant(log_probs), tf.constant(lengths), weight, 0.0, None, None))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert np.argmax(got) == 1  # unpenalized, the short one would win


def test_gather_tree_follows_the_parents_back_and_fills_end_tokens():
    # one batch entry, 3 beams, 3 steps; beam k at the last step continues parents[t][k]
    step_ids = np.array([[[1, 2, 3]], [[4, 5, 6]], [[7, 8, 9]], [[0, 0, 0]]], np.int32)
    parents = np.array([[[0, 0, 0]], [[2, 0, 1]], [[1, 1, 0]], [[0, 0, 0]]], np.int32)
    beams = run(seq2seq.gather_tree(step_ids, parents, [3], end_token=99))
    # beam 0: step 2 token 7, parent 1 -> step 1 token 5, parent 0 -> step 0 token 1
    np.testing.assert_array_equal(beams[:, 0, 0], [1, 5, 7, 99])
    np.testing.assert_array_equal(beams[:, 0, 1], [1, 5, 8, 99])
    np.testing.assert_array_equal(beams[:, 0, 2], [3, 4, 9, 99])
    ended = run(seq2seq.gather_tree(step_ids, parents, [3], end_token=5))
    np.testing.assert_array_equal(ended[:, 0, 0], [1, 5, 5, 5])  # everything after the first end token
    broken = parents.copy()
    broken[1, 0, 0] = -1  # beam 2 follows beam 0 at step 1 and would read step 0 at parent -1
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"invalid parent id -1 at \(batch, time, beam\) == \(0, 0, 2\)"
    ):
        run(seq2seq.gather_tree(step_ids, broken, [3], end_token=99))


@pytest.mark.parametrize(
    "average_time, average_batch, sum_time, sum_batch",
    [
        (True, True, False, False),
        (False, False, True, True),
        (True, False, False, False),
        (False, True, False, False),
        (False, False, True, False),
        (False, False, False, True),
        (False, False, False, False),
    ],
)
def test_sequence_loss_is_the_weighted_numpy_cross_entropy(average_time, average_batch, sum_time, sum_batch):
    logits = RNG.randn(3, 4, 5).astype(np.float32)
    targets = RNG.randint(0, 5, (3, 4)).astype(np.int32)
    weights = np.array([[1, 1, 1, 0], [1, 0, 0, 0], [0.5, 2, 0, 0]], np.float32)
    ce = -np.log(np.take_along_axis(softmax(logits), targets[..., None], -1))[..., 0] * weights
    if average_time and average_batch:
        expected = ce.sum() / weights.sum()
    elif sum_time and sum_batch:
        expected = ce.sum() / np.count_nonzero(weights)
    elif average_time or average_batch:
        axis = 0 if average_batch else 1
        expected = np.where(weights.sum(axis) > 0, ce.sum(axis) / np.maximum(weights.sum(axis), 1e-30), 0)
    elif sum_time or sum_batch:
        axis = 0 if sum_batch else 1
        expected = np.where(
            np.count_nonzero(weights, axis), ce.sum(axis) / np.maximum(np.count_nonzero(weights, axis), 1), 0
        )
    else:
        expected = ce
    loss = seq2seq.sequence_loss(
        tf.constant(logits),
        tf.constant(targets),
        tf.constant(weights),
        average_across_timesteps=average_time,
        average_across_batch=average_batch,
        sum_over_timesteps=sum_time,
        sum_over_batch=sum_batch,
    )
    np.testing.assert_allclose(run(loss), expected, rtol=1e-5, atol=1e-6)


def test_legacy_sequence_losses_are_the_numpy_log_perplexities():
    logits = [RNG.randn(2, 4).astype(np.float32) for _ in range(3)]
    targets = [np.array([t, 3 - t], np.int32) for t in range(3)]
    weights = [np.array([1, 1], np.float32), np.array([1, 0], np.float32), np.array([0, 0], np.float32)]
    per_step = [-np.log(softmax(lg)[np.arange(2), tg]) * w for lg, tg, w in zip(logits, targets, weights)]
    by_example = np.sum(per_step, 0) / (np.sum(weights, 0) + 1e-12)
    got = run(
        {
            "by_example": legacy.sequence_loss_by_example(logits, targets, weights),
            "mean": legacy.sequence_loss(logits, targets, weights),
            "sum": legacy.sequence_loss(logits, targets, weights, average_across_batch=False),
        }
    )
    np.testing.assert_allclose(got["by_example"], by_example, rtol=1e-5)
    np.testing.assert_allclose(got["mean"], by_example.sum() / 2, rtol=1e-5)
    np.testing.assert_allclose(got["sum"], by_example.sum(), rtol=1e-5)


def test_bahdanau_attention_weights_sum_to_one_inside_the_memory_and_match_numpy():
    batch, max_time, depth, units = 2, 4, 3, 5
    memory = RNG.randn(batch, max_time, depth).astype(np.float32)
    query = RNG.randn(batch, 6).astype(np.float32)
    lengths = np.array([4, 2], np.int32)
    mechanism = seq2seq.BahdanauAttention(units, tf.constant(memory), memory_sequence_length=lengths, normalize=True)
    alignments, next_state = mechanism(tf.constant(query), mechanism.initial_state(batch, tf.float32))
    assert variable_names() == [
        "bahdanau_attention/attention_b",
        "bahdanau_attention/attention_g",
        "bahdanau_attention/attention_v",
        "bahdanau_attention/query_layer/kernel",
        "memory_layer/kernel",
    ]
    got = run({"a": alignments, "state": next_state, "vars": {v.op.name: v for v in tf.compat.v1.global_variables()}})
    w = got["vars"]
    v = w["bahdanau_attention/attention_v"]
    normed_v = w["bahdanau_attention/attention_g"] * v / np.linalg.norm(v)
    keys = (memory * (np.arange(max_time) < lengths[:, None])[..., None]) @ w["memory_layer/kernel"]
    processed = query @ w["bahdanau_attention/query_layer/kernel"]
    score = (normed_v * np.tanh(keys + processed[:, None] + w["bahdanau_attention/attention_b"])).sum(-1)
    score[np.arange(max_time) >= lengths[:, None]] = -np.inf
    np.testing.assert_allclose(got["a"], softmax(score), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["a"].sum(1), [1, 1], rtol=1e-6)
    assert np.all(got["a"][1, 2:] == 0)
    np.testing.assert_array_equal(got["state"], got["a"])


@pytest.mark.parametrize("control_flow", [1, 2])
def test_attention_wrapper_decodes_with_tensorflow_1_15_variable_names_and_luong_scores(control_flow):
    use_control_flow(control_flow)
    batch, max_time, depth = 2, 3, 4
    memory = RNG.randn(batch, max_time, depth).astype(np.float32)
    inputs = RNG.randn(batch, 2, 3).astype(np.float32)
    mechanism = seq2seq.LuongAttention(4, tf.constant(memory), memory_sequence_length=[3, 1], scale=True)
    cell = seq2seq.AttentionWrapper(
        tf.compat.v1.nn.rnn_cell.BasicLSTMCell(4), mechanism, attention_layer_size=5, alignment_history=True
    )
    initial = cell.zero_state(batch, tf.float32)
    assert isinstance(initial, seq2seq.AttentionWrapperState)
    helper = seq2seq.TrainingHelper(tf.constant(inputs), [2, 2])
    outputs, state, _ = seq2seq.dynamic_decode(seq2seq.BasicDecoder(cell, helper, initial))
    assert variable_names() == [
        "decoder/attention_wrapper/attention_layer/kernel",
        "decoder/attention_wrapper/basic_lstm_cell/bias",
        "decoder/attention_wrapper/basic_lstm_cell/kernel",
        "decoder/attention_wrapper/luong_attention/attention_g",
        "memory_layer/kernel",
    ]
    got = run(
        {
            "outputs": outputs.rnn_output,
            "state": state._replace(alignment_history=()),
            "history": state.alignment_history.stack(),
        }
    )
    assert got["outputs"].shape == (batch, 2, 5) and got["state"].time == 2
    np.testing.assert_allclose(got["history"].sum(-1), np.ones((2, batch)), rtol=1e-6)
    assert np.all(got["history"][:, 1, 1:] == 0)  # beyond the second memory's length
    np.testing.assert_allclose(got["outputs"][:, -1], got["state"].attention, rtol=1e-6)
    cloned = initial.clone(cell_state=cell.zero_state(batch, tf.float32).cell_state)
    assert isinstance(cloned, seq2seq.AttentionWrapperState)


def test_attention_variables_are_created_in_tensorflow_1_15_order_with_its_initial_values():
    # Under a graph seed an initializer without its own seed takes one from what the graph made before it (every op
    # in TF 1.15, the earlier unseeded random ops in TF 2), so the memory layers are built with the mechanisms
    # (outside the decoder's scope) and each step creates its variables in TF 1.15's order: the query layer, v, g, b
    # (Bahdanau), g (scaled Luong), each mechanism's attention layer after it.
    rng = np.random.RandomState(7)  # its own draws: the module's RNG stays as the other tests expect
    memory = tf.constant(rng.randn(2, 3, 4).astype(np.float32))
    bahdanau = seq2seq.BahdanauAttention(5, memory, memory_sequence_length=[3, 2], normalize=True)
    luong = seq2seq.LuongAttention(6, memory, scale=True)
    assert [v.op.name for v in tf.compat.v1.global_variables()] == ["memory_layer/kernel", "memory_layer_1/kernel"]
    initializer = tf.compat.v1.constant_initializer(0.5)
    with tf.compat.v1.variable_scope("root", initializer=initializer):
        cell = seq2seq.AttentionWrapper(
            tf.compat.v1.nn.rnn_cell.LSTMCell(6), [bahdanau, luong], attention_layer_size=[2, 3]
        )
        helper = seq2seq.TrainingHelper(tf.constant(rng.randn(2, 2, 3).astype(np.float32)), [2, 1])
        outputs, _, _ = seq2seq.dynamic_decode(seq2seq.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32)))
    created = [v.op.name for v in tf.compat.v1.global_variables()]
    inner = "root/decoder/attention_wrapper/"
    assert created == ["memory_layer/kernel", "memory_layer_1/kernel"] + [
        inner + name
        for name in (
            "lstm_cell/kernel",
            "lstm_cell/bias",
            "bahdanau_attention/query_layer/kernel",
            "bahdanau_attention/attention_v",
            "bahdanau_attention/attention_g",
            "bahdanau_attention/attention_b",
            "attention_layer/kernel",
            "luong_attention/attention_g",
            "attention_layer_1/kernel",
        )
    ]
    got = run({"outputs": outputs.rnn_output, "vars": dict(zip(created, tf.compat.v1.global_variables()))})
    w = got["vars"]
    assert got["outputs"].shape == (2, 2, 5)
    # g and b keep their own initializers under the scope's; v and the layers take the scope's.
    np.testing.assert_allclose(w[inner + "bahdanau_attention/attention_g"], np.sqrt(1 / 5), rtol=1e-6)
    np.testing.assert_array_equal(w[inner + "bahdanau_attention/attention_b"], np.zeros(5))
    np.testing.assert_array_equal(w[inner + "luong_attention/attention_g"], 1.0)
    np.testing.assert_array_equal(w[inner + "bahdanau_attention/attention_v"], np.full(5, 0.5, np.float32))
    # The memory layers are outside "root": the default (Glorot uniform) initializer, not the scope's constant.
    assert np.all(w["memory_layer/kernel"] != 0.5) and np.abs(w["memory_layer/kernel"]).max() <= np.sqrt(6 / 9)


def test_monotonic_attention_modes_agree_and_hard_attention_moves_forward():
    p = RNG.uniform(0.1, 0.9, (2, 5)).astype(np.float32)
    previous = np.array([[1, 0, 0, 0, 0], [0, 0.5, 0.5, 0, 0]], np.float32)
    got = run({mode: seq2seq.monotonic_attention(p, previous, mode) for mode in ("recursive", "parallel")})
    q = np.zeros(2, np.float32)
    expected = np.zeros_like(p)
    for i in range(5):  # q_i = (1 - p_{i-1}) q_{i-1} + previous_i; a_i = p_i q_i
        q = (1 - p[:, i - 1]) * q + previous[:, i] if i else previous[:, 0]
        expected[:, i] = p[:, i] * q
    np.testing.assert_allclose(got["recursive"], expected, rtol=1e-5)
    np.testing.assert_allclose(got["parallel"], expected, rtol=1e-4, atol=1e-6)
    hard = run(
        seq2seq.monotonic_attention(np.array([[0, 1, 1, 0]], np.float32), np.array([[0, 0, 1, 0]], np.float32), "hard")
    )
    np.testing.assert_array_equal(hard, [[0, 0, 1, 0]])  # not before the previous position, the first chosen
    np.testing.assert_allclose(run(seq2seq.safe_cumprod([0.5, 0.5, 0.0])), [0.5, 0.25, 0.0], atol=1e-30)
    np.testing.assert_array_equal(run(seq2seq.hardmax([[1.0, 3.0, 2.0]])), [[0, 1, 0]])


def test_tile_batch_repeats_each_entry_in_place():
    tiled = run(seq2seq.tile_batch({"a": tf.constant([[1, 2], [3, 4]])}, 2))
    np.testing.assert_array_equal(tiled["a"], [[1, 2], [1, 2], [3, 4], [3, 4]])


def test_legacy_attention_decoder_names_its_variables_as_tensorflow_1_15():
    cell = tf.compat.v1.nn.rnn_cell.GRUCell(3)
    inputs = [tf.constant(RNG.randn(2, 4).astype(np.float32)) for _ in range(2)]
    states = tf.constant(RNG.randn(2, 5, 6).astype(np.float32))
    outputs, _ = legacy.attention_decoder(inputs, cell.zero_state(2, tf.float32), states, cell, output_size=7)
    assert variable_names() == [
        "attention_decoder/Attention_0/bias",
        "attention_decoder/Attention_0/kernel",
        "attention_decoder/AttnOutputProjection/bias",
        "attention_decoder/AttnOutputProjection/kernel",
        "attention_decoder/AttnV_0",
        "attention_decoder/AttnW_0",
        "attention_decoder/bias",
        "attention_decoder/gru_cell/candidate/bias",
        "attention_decoder/gru_cell/candidate/kernel",
        "attention_decoder/gru_cell/gates/bias",
        "attention_decoder/gru_cell/gates/kernel",
        "attention_decoder/kernel",
    ]
    assert [o.shape for o in run(outputs)] == [(2, 7), (2, 7)]


def test_legacy_rnn_decoder_feeds_back_what_the_loop_function_makes():
    cell = ScriptedCell(np.array([[1, 2, 0]], np.int32), 3)
    seen = []

    def loop_function(prev, i):
        seen.append(i)
        return prev * 2.0

    outputs, state = legacy.rnn_decoder([tf.ones([1, 3])] * 3, tf.zeros([1, 1]), cell, loop_function=loop_function)
    got = run({"outputs": outputs, "state": state})
    assert seen == [1, 2]
    np.testing.assert_array_equal(np.argmax(got["outputs"], -1)[:, 0], [1, 2, 0])
    assert got["state"][0, 0] == 3


def test_legacy_embedding_attention_seq2seq_with_buckets_shares_variables():
    enc = [tf.constant([1, 2]) for _ in range(3)]
    dec = [tf.constant([0, 3]) for _ in range(3)]
    weights = [tf.ones([2]) for _ in range(3)]

    def model(encoder_inputs, decoder_inputs):  # a new cell per bucket: copying a built cell fails, as on TF 1.15
        cell = tf.compat.v1.nn.rnn_cell.GRUCell(4)
        return legacy.embedding_attention_seq2seq(encoder_inputs, decoder_inputs, cell, 5, 6, 3)

    outputs, losses = legacy.model_with_buckets(enc, dec, dec, weights, [(2, 2), (3, 3)], model)
    names = variable_names()
    assert "embedding_attention_seq2seq/embedding_attention_decoder/embedding" in names
    assert "embedding_attention_seq2seq/rnn/embedding_wrapper/embedding" in names
    assert "embedding_attention_seq2seq/embedding_attention_decoder/attention_decoder/AttnW_0" in names
    got = run({"outputs": outputs, "losses": losses})
    assert [len(o) for o in got["outputs"]] == [2, 3] and got["outputs"][1][0].shape == (2, 6)
    assert all(np.isfinite(loss) and loss > 0 for loss in got["losses"])


def test_bad_arguments_raise_the_projects_errors_naming_them():
    with pytest.raises(
        NpuArgumentTypeError, match="dynamic_decode: decoder must be a tf.contrib.seq2seq.Decoder, got str"
    ):
        seq2seq.dynamic_decode("decoder")
    with pytest.raises(
        NpuArgumentError, match=r"sequence_loss: logits must be a \[batch_size, sequence_length, num_cl"
    ):
        seq2seq.sequence_loss(tf.zeros([2, 3]), tf.zeros([2, 3], tf.int32), tf.zeros([2, 3]))
    with pytest.raises(NpuArgumentError, match="average_across_batch and sum_over_batch cannot both be True"):
        seq2seq.sequence_loss(tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32), tf.zeros([2, 3]), sum_over_batch=True)
    with pytest.raises(NpuArgumentError, match="mode must be one of recursive, parallel, hard, got 'soft'"):
        seq2seq.monotonic_attention(tf.zeros([1, 2]), tf.zeros([1, 2]), "soft")
    with pytest.raises(NpuArgumentError, match=r"start_tokens must be a vector \[batch_size\], got shape \(2, 1\)"):
        seq2seq.GreedyEmbeddingHelper(tf.eye(3), tf.zeros([2, 1], tf.int32), 0)
    with pytest.raises(NpuArgumentError, match="BahdanauAttention: num_units must be a positive int, got 0"):
        seq2seq.BahdanauAttention(0, tf.zeros([1, 2, 3]))
    mechanism = seq2seq.LuongAttention(3, tf.zeros([1, 2, 3]))
    with pytest.raises(NpuArgumentError, match="give attention_layer_size or attention_layer, not both"):
        seq2seq.AttentionWrapper(
            tf.compat.v1.nn.rnn_cell.GRUCell(3),
            mechanism,
            attention_layer_size=2,
            attention_layer=tf.compat.v1.layers.Dense(2),
        )
    with pytest.raises(NpuArgumentTypeError, match="attention_mechanism must be an AttentionMechanism .* got int"):
        seq2seq.AttentionWrapper(tf.compat.v1.nn.rnn_cell.GRUCell(3), 3)
    with pytest.raises(NpuArgumentError, match="attention_decoder: num_heads must be at least 1"):
        legacy.attention_decoder([tf.zeros([1, 2])], tf.zeros([1, 3]), tf.zeros([1, 2, 2]), None, num_heads=0)
    with pytest.raises(
        NpuArgumentError, match="logits, weights and targets must be lists of the same length, got 2, 1"
    ):
        legacy.sequence_loss_by_example([tf.zeros([1, 2])] * 2, [tf.zeros([1], tf.int32)] * 2, [tf.ones([1])])


def test_contrib_routes_and_upstreams_deep_paths_lead_here():
    from npu_bridge.core.tf1.seq2seq import beam_search_ops, decoder, helpers

    root = contrib.ContribModule("", None, tf)
    assert root.seq2seq.BahdanauAttention is seq2seq.BahdanauAttention
    assert root.seq2seq.dynamic_decode is seq2seq.dynamic_decode
    ops = root.seq2seq.python.ops
    assert ops.attention_wrapper.AttentionWrapperState is seq2seq.AttentionWrapperState
    assert ops.beam_search_ops.gather_tree is beam_search_ops.gather_tree
    assert ops.decoder._transpose_batch_time is decoder._transpose_batch_time
    assert ops.helper.TrainingHelper is helpers.TrainingHelper
    assert ops.beam_search_decoder.BeamSearchDecoder is seq2seq.BeamSearchDecoder
    assert root.legacy_seq2seq.attention_decoder is legacy.attention_decoder
    assert root.legacy_seq2seq.python.ops.seq2seq.sequence_loss_by_example is legacy.sequence_loss_by_example


SCRIPT = """
import json
import numpy as np
import tensorflow as tf
from tensorflow.contrib.seq2seq import GreedyEmbeddingHelper, dynamic_decode
from tensorflow.contrib.seq2seq.python.ops import attention_wrapper

memory = tf.placeholder(tf.float32, [None, 4, 3])
mechanism = attention_wrapper.BahdanauAttention(5, memory, memory_sequence_length=[4, 2])
cell = tf.contrib.seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(6), mechanism, attention_layer_size=7)
helper = GreedyEmbeddingHelper(tf.eye(7), tf.fill([2], 1), 0)
decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32))
outputs, state, lengths = dynamic_decode(decoder, maximum_iterations=3)
loss = tf.contrib.legacy_seq2seq.sequence_loss([outputs.rnn_output[:, 0]], [tf.constant([1, 2])], [tf.ones([2])])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    got = sess.run({"ids": outputs.sample_id, "lengths": lengths, "loss": loss},
                   {memory: np.ones((2, 4, 3), np.float32)})
print("RESULT " + json.dumps({"shape": list(got["ids"].shape), "lengths": got["lengths"].tolist(),
                              "loss": float(got["loss"])}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_tf1_script_imports_and_runs_seq2seq_in_the_mode(tmp_path):
    got = helpers.tf1.run_tf1_script(tmp_path, SCRIPT)
    assert got["shape"][0] == 2 and got["shape"][1] <= 3
    assert all(1 <= n <= 3 for n in got["lengths"]) and np.isfinite(got["loss"])
