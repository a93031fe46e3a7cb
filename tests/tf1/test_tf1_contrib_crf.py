"""tf.contrib.crf of the TF1 mode (npu_bridge.core.tf1.crf) against brute force: every tag sequence enumerated."""

import itertools

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1 import contrib, crf

NUM_TAGS = 3
MAX_LEN = 4
LENGTHS = np.array([4, 1, 3, 0, 2], np.int32)  # different lengths, with 1 and 0
RNG = np.random.RandomState(11)
INPUTS = RNG.randn(len(LENGTHS), MAX_LEN, NUM_TAGS)
TAGS = RNG.randint(0, NUM_TAGS, (len(LENGTHS), MAX_LEN)).astype(np.int32)
TRANSITIONS = RNG.randn(NUM_TAGS, NUM_TAGS)


def brute_score(unary, tags, transitions):
    """Score of one tag sequence: unary [length, num_tags], tags [length]."""
    return sum(unary[t, tag] for t, tag in enumerate(tags)) + sum(
        transitions[a, b] for a, b in zip(tags[:-1], tags[1:])
    )


def brute_all(unary, transitions):
    """{tags: score} over every tag sequence of the length of ``unary``."""
    return {
        tags: brute_score(unary, tags, transitions)
        for tags in itertools.product(range(NUM_TAGS), repeat=unary.shape[0])
    }


def brute_log_norm(unary, transitions):
    if unary.shape[0] == 0:
        return 0.0
    scores = np.array(list(brute_all(unary, transitions).values()))
    return float(np.log(np.sum(np.exp(scores - scores.max()))) + scores.max())


def brute_best(unary, transitions):
    scores = brute_all(unary, transitions)
    best = max(scores, key=scores.get)
    return list(best), scores[best]


@pytest.fixture(params=["v2 control flow", "v1 control flow"])
def control_flow(request):
    """The TF1 mode builds graphs with v1 control flow (v2 behaviour disabled); the functions work with both."""
    enabled = tf.compat.v1.control_flow_v2_enabled()
    if request.param == "v1 control flow":
        tf.compat.v1.disable_control_flow_v2()
    else:
        tf.compat.v1.enable_control_flow_v2()
    yield request.param
    (tf.compat.v1.enable_control_flow_v2 if enabled else tf.compat.v1.disable_control_flow_v2)()


def run(fetches, feed_dict=None):
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def test_scores_log_norm_and_likelihood_match_brute_force(control_flow):
    with tf.Graph().as_default():
        inputs, tags, lengths, transitions = (
            tf.constant(INPUTS, tf.float32),
            tf.constant(TAGS),
            tf.constant(LENGTHS),
            tf.constant(TRANSITIONS, tf.float32),
        )
        likelihood, returned = crf.crf_log_likelihood(inputs, tags, lengths, transitions)
        assert returned is transitions
        fetched = run(
            {
                "score": crf.crf_sequence_score(inputs, tags, lengths, transitions),
                "unary": crf.crf_unary_score(tags, lengths, inputs),
                "binary": crf.crf_binary_score(tags, lengths, transitions),
                "norm": crf.crf_log_norm(inputs, lengths, transitions),
                "likelihood": likelihood,
            }
        )
    for b, length in enumerate(LENGTHS):
        unary, seq = INPUTS[b, :length], TAGS[b, :length]
        score = brute_score(unary, seq, TRANSITIONS) if length else 0.0
        norm = brute_log_norm(unary, TRANSITIONS)
        np.testing.assert_allclose(fetched["score"][b], score, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(fetched["unary"][b] + fetched["binary"][b], score, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(fetched["norm"][b], norm, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(fetched["likelihood"][b], score - norm, rtol=1e-5, atol=1e-5)
    assert np.all(np.isfinite(fetched["likelihood"]))


def test_a_batch_of_length_one_sequences_and_unknown_shapes(control_flow):
    with tf.Graph().as_default():
        inputs = tf.compat.v1.placeholder(tf.float64, [None, None, None])
        tags = tf.compat.v1.placeholder(tf.int32, [None, None])
        lengths = tf.compat.v1.placeholder(tf.int64, [None])
        transitions = tf.compat.v1.placeholder(tf.float64, [None, None])
        likelihood, _ = crf.crf_log_likelihood(inputs, tags, lengths, transitions)
        decoded = crf.crf_decode(inputs, transitions, lengths)
        feeds = {inputs: INPUTS[:, :1], tags: TAGS[:, :1], lengths: np.minimum(LENGTHS, 1), transitions: TRANSITIONS}
        got, (got_tags, got_best) = run((likelihood, decoded), feeds)
    for b in range(len(LENGTHS)):
        unary = INPUTS[b, : min(LENGTHS[b], 1)]
        expected = brute_score(unary, TAGS[b, : len(unary)], TRANSITIONS) - brute_log_norm(unary, TRANSITIONS)
        np.testing.assert_allclose(got[b], expected, rtol=1e-9, atol=1e-9)
        if len(unary):
            assert got_tags[b].tolist() == [int(np.argmax(unary[0]))]
            np.testing.assert_allclose(got_best[b], unary[0].max())
        else:
            assert got_tags[b].tolist() == [0] and got_best[b] == 0.0


def test_viterbi_decode_and_crf_decode_find_the_best_sequence(control_flow):
    with tf.Graph().as_default():
        tags, best = crf.crf_decode(
            tf.constant(INPUTS, tf.float32), tf.constant(TRANSITIONS, tf.float32), tf.constant(LENGTHS)
        )
        assert tags.dtype == tf.int32
        got_tags, got_best = run((tags, best))
    assert got_tags.shape == (len(LENGTHS), MAX_LEN) and got_best.shape == (len(LENGTHS),)
    for b, length in enumerate(LENGTHS):
        if not length:
            assert got_tags[b].tolist() == [0] * MAX_LEN and got_best[b] == 0.0
            continue
        expected, score = brute_best(INPUTS[b, :length], TRANSITIONS)
        assert got_tags[b].tolist() == expected + [0] * (MAX_LEN - length)
        np.testing.assert_allclose(got_best[b], score, rtol=1e-5)
        viterbi, viterbi_score = crf.viterbi_decode(INPUTS[b, :length], TRANSITIONS)
        assert viterbi == expected and all(type(tag) is int for tag in viterbi)
        assert isinstance(viterbi_score, float)
        np.testing.assert_allclose(viterbi_score, score, rtol=1e-12)


def brute_multitag(unary, transitions, bitmap):
    """logsumexp of the scores of the tag sequences the bitmap allows (-inf when it allows none)."""
    scores = [
        brute_score(unary, tags, transitions) for tags in itertools.product(*(np.flatnonzero(row) for row in bitmap))
    ]
    return float(np.logaddexp.reduce(scores)) if scores else -np.inf


def test_multitag_sequence_score_sums_the_sequences_the_bitmap_allows(control_flow):
    bitmap = RNG.rand(len(LENGTHS), MAX_LEN, NUM_TAGS) < 0.6
    bitmap[:, :, 0] |= ~bitmap.any(axis=2)  # at least one tag everywhere
    one_hot = np.eye(NUM_TAGS, dtype=bool)[TAGS]
    with tf.Graph().as_default():
        transitions = tf.constant(TRANSITIONS)
        got, plain, fed = run(
            [
                crf.crf_multitag_sequence_score(INPUTS, bitmap, LENGTHS, transitions),
                crf.crf_multitag_sequence_score(INPUTS, one_hot, LENGTHS, transitions),
                crf.crf_sequence_score(INPUTS, TAGS, LENGTHS, transitions),
            ]
        )
    for b, length in enumerate(LENGTHS):
        want = brute_multitag(INPUTS[b, :length], TRANSITIONS, bitmap[b, :length]) if length else 0.0
        np.testing.assert_allclose(got[b], want, rtol=1e-6, err_msg=f"sequence {b}, length {length}")
    np.testing.assert_allclose(plain, fed, rtol=1e-6)  # one tag per position: crf_sequence_score


def test_multitag_sequence_score_of_one_position_is_the_logsumexp_of_the_allowed_tags(control_flow):
    unary = np.array([[[4.0, 5.0, -3.0]]])
    with tf.Graph().as_default():
        static = crf.crf_multitag_sequence_score(unary, [[[True, True, False]]], [1], tf.constant(TRANSITIONS))
        placeholder = tf.compat.v1.placeholder(tf.float64, [1, None, 3])
        dynamic = crf.crf_multitag_sequence_score(placeholder, [[[True, True, False]]], [1], TRANSITIONS)
        got = run([static, dynamic], {placeholder: unary})
    np.testing.assert_allclose(got, [[np.logaddexp(4.0, 5.0)]] * 2)
    with pytest.raises(NpuArgumentTypeError, match="tag_bitmap has dtype int32; it must be a bool tensor"):
        crf.crf_multitag_sequence_score(unary, [[[1, 1, 0]]], [1], TRANSITIONS)
    with pytest.raises(NpuArgumentError, match=r"tag_bitmap has shape \(1, 1, 2\); it must be the shape of inputs"):
        crf.crf_multitag_sequence_score(unary, [[[True, False]]], [1], TRANSITIONS)


def test_crf_forward_and_the_rnn_cell_give_the_alphas_at_each_sequence_end(control_flow):
    with tf.Graph().as_default():
        inputs, lengths = tf.constant(INPUTS), tf.constant(LENGTHS)
        transitions = tf.constant(TRANSITIONS)
        alphas = crf.crf_forward(inputs[:, 1:], inputs[:, 0], transitions, lengths)
        _, cell_alphas = tf.compat.v1.nn.dynamic_rnn(
            crf.CrfForwardRnnCell(transitions),
            inputs[:, 1:],
            sequence_length=tf.maximum(lengths - 1, 0),
            initial_state=inputs[:, 0],
        )
        got, got_cell = run((alphas, cell_alphas))
    np.testing.assert_allclose(got, got_cell, rtol=1e-12)
    for b, length in enumerate(LENGTHS):
        if length:  # alpha at the end, per last tag: logsumexp over the sequences ending in that tag
            scores = brute_all(INPUTS[b, :length], TRANSITIONS)
            for tag in range(NUM_TAGS):
                ending = np.array([s for tags, s in scores.items() if tags[-1] == tag])
                np.testing.assert_allclose(got[b, tag], np.log(np.exp(ending).sum()), rtol=1e-10)


def test_without_transition_params_a_transitions_variable_is_created_and_training_raises_the_likelihood():
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(1)
        inputs = tf.compat.v1.get_variable("unary", initializer=tf.constant(INPUTS, tf.float32))
        with tf.compat.v1.variable_scope("crf_layer"):
            likelihood, transitions = crf.crf_log_likelihood(inputs, tf.constant(TAGS), tf.constant(LENGTHS))
        assert transitions.op.name == "crf_layer/transitions"
        assert transitions.shape.as_list() == [NUM_TAGS, NUM_TAGS]
        assert transitions in tf.compat.v1.trainable_variables()
        loss = -tf.reduce_mean(likelihood)
        gradients = tf.gradients(loss, [inputs, transitions])
        assert all(g is not None for g in gradients)
        train = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            before = sess.run(loss)
            for _ in range(5):
                sess.run(train)
            after = sess.run(loss)
    assert np.isfinite(before) and after < before


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: crf.crf_log_likelihood(np.zeros([2, 3]), np.zeros([2, 3], np.int32), [3, 3]),
            NpuArgumentError,
            "rank",
        ),
        (
            lambda: crf.crf_log_norm(np.zeros([2, 3, 4], np.float32), [3, 3], np.zeros([3, 3], np.float32)),
            NpuArgumentError,
            r"transition_params has shape \(3, 3\); it must be \[num_tags, num_tags\] with num_tags = 4",
        ),
        (
            lambda: crf.crf_decode(np.zeros([2, 3, 4], np.float32), np.zeros([4, 3], np.float32), [3, 3]),
            NpuArgumentError,
            "square",
        ),
        (
            lambda: crf.crf_sequence_score(
                np.zeros([2, 3, 4], np.float32), np.zeros([2, 5], np.int32), [3, 3], np.zeros([4, 4], np.float32)
            ),
            NpuArgumentError,
            "tag_indices has shape",
        ),
        (
            lambda: crf.crf_log_norm(np.zeros([2, 3, 4], np.float32), [3, 3, 3], np.zeros([4, 4], np.float32)),
            NpuArgumentError,
            "batch_size",
        ),
        (
            lambda: crf.crf_log_norm(np.zeros([2, 3, 4], np.float32), [3.0, 3.0], np.zeros([4, 4], np.float32)),
            NpuArgumentTypeError,
            "sequence_lengths has dtype float32",
        ),
        (lambda: crf.viterbi_decode(np.zeros([3, 4]), np.zeros([3, 3])), NpuArgumentError, "transition_params"),
        (lambda: crf.viterbi_decode(np.zeros([0, 3]), np.zeros([3, 3])), NpuArgumentError, "seq_len >= 1"),
    ],
    ids=["inputs rank", "num_tags", "not square", "tags shape", "batch", "lengths dtype", "viterbi", "viterbi empty"],
)
def test_bad_shapes_raise_the_projects_errors(call, error, message):
    with tf.Graph().as_default(), pytest.raises(error, match=message):
        call()


def test_the_contrib_shim_routes_crf_here():
    root = contrib.ContribModule("", None, tf)
    assert root.crf.crf_log_likelihood is crf.crf_log_likelihood
    assert root.crf.viterbi_decode is crf.viterbi_decode
    assert root.crf.crf_decode is crf.crf_decode
    assert "crf" not in contrib.UNROUTED
