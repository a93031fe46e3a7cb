"""NPU compute ops against numpy references, with gradients."""

import math

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.estimator import npu_aicore_ops, npu_ops
from npu_bridge.estimator.npu_unary_ops import npu_unary_ops
from npu_bridge.helper import helper

v1 = tf.compat.v1
RNG = np.random.RandomState(3)
ERF = np.vectorize(math.erf)


def evaluate(build, feed_arrays=()):
    """Builds ``build(*placeholders)`` in a new graph and runs it; placeholders are fed ``feed_arrays``."""
    graph = tf.Graph()
    with graph.as_default():
        placeholders = [v1.placeholder(tf.as_dtype(a.dtype), a.shape) for a in feed_arrays]
        fetches = build(*placeholders)
        with v1.Session(graph=graph) as sess:
            return sess.run(fetches, dict(zip(placeholders, feed_arrays)))


def gradient_error(build, x):
    """Largest difference between TensorFlow's and a numerical gradient of ``sum(build(x) * r)``, float64."""
    graph = tf.Graph()
    with graph.as_default():
        placeholder = v1.placeholder_with_default(x, x.shape)
        y = build(placeholder)
        with v1.Session(graph=graph):
            return v1.test.compute_gradient_error(placeholder, list(x.shape), y, y.shape.as_list(), x_init_value=x)


# --- dropout -----------------------------------------------------------------------------------------------

X = RNG.uniform(0.5, 1.5, size=(200, 50)).astype(np.float32)


@pytest.mark.parametrize("op", [npu_ops.dropout, npu_aicore_ops.dropout_v3, npu_aicore_ops.dropout_v4])
def test_dropout_keeps_about_keep_prob_scaled_by_its_inverse_and_reuses_the_mask_for_the_gradient(op):
    def build(x, keep_prob):
        y = op(x, keep_prob)
        return y, tf.gradients(y, x)[0]

    y, grad = evaluate(build, [X, np.float32(0.6)])  # keep_prob fed through a placeholder
    kept = y != 0
    assert abs(kept.mean() - 0.6) < 0.02
    np.testing.assert_allclose(y[kept], X[kept] / 0.6, rtol=1e-6)
    np.testing.assert_allclose(grad, kept / np.float32(0.6), rtol=1e-6)


def test_dropout_seed_fixes_the_mask_sequence_and_runs_draw_new_masks():
    def masks():
        graph = tf.Graph()
        with graph.as_default():
            v1.set_random_seed(7)
            y = npu_ops.dropout(tf.ones([1000]), 0.5, seed=3)
            with v1.Session(graph=graph) as sess:
                return [sess.run(y) for _ in range(2)]

    first, second = masks(), masks()
    np.testing.assert_array_equal(first[0], second[0])
    assert not np.array_equal(first[0], first[1])


def test_dropout_noise_shape_broadcasts_the_mask():
    y = evaluate(lambda x: npu_ops.dropout(x, 0.5, noise_shape=[200, 1]), [X])
    kept_rows = (y != 0).all(axis=1) | (y == 0).all(axis=1)
    assert kept_rows.all()


def test_dropout_with_keep_prob_one_is_the_identity():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.ones([3])
        assert npu_ops.dropout(x, 1.0) is x


@pytest.mark.parametrize(
    "x, keep_prob, error",
    [
        (np.ones(3, np.int32), 0.5, "x has to be a floating point tensor since it's going to be scaled. Got a int32"),
        (np.ones(3, np.float32), 0.0, r"keep_prob must be a scalar tensor or a float in the range \(0, 1\], got 0"),
        (np.ones(3, np.float32), 1.5, r"keep_prob must be a scalar tensor or a float in the range \(0, 1\], got 1.5"),
        (np.ones(3, np.float32), np.array([0.5, 0.5], np.float32), "must have rank 0"),
    ],
)
def test_dropout_errors(x, keep_prob, error):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=error):
            npu_ops.dropout(tf.constant(x), keep_prob if np.ndim(keep_prob) == 0 else tf.constant(keep_prob))


@pytest.mark.parametrize("op", [npu_ops.dropout, npu_aicore_ops.dropout_v3, npu_aicore_ops.dropout_v4])
@pytest.mark.parametrize("keep_prob_form", ["unshaped placeholder", "1 - placeholder", "python float"])
def test_dense_layer_after_dropout_builds_whatever_the_keep_prob_form(op, keep_prob_form):
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(1)
        x = v1.placeholder(tf.float32, [None, 50])
        feed = {x: X}
        if keep_prob_form == "python float":
            keep_prob = 0.6
        else:
            fed = v1.placeholder(tf.float32)  # no shape, as scripts write it
            keep_prob = fed if keep_prob_form == "unshaped placeholder" else 1 - fed
            feed[fed] = 0.6 if keep_prob_form == "unshaped placeholder" else 0.4
        dropped = op(x, keep_prob)
        assert dropped.shape.as_list() == [None, 50]
        logits = v1.layers.dense(dropped, 10, kernel_initializer=v1.ones_initializer())
        assert logits.shape.as_list() == [None, 10]
        with v1.Session(graph=graph) as sess:
            sess.run(v1.global_variables_initializer())
            y, out = sess.run([dropped, logits], feed)
    assert out.shape == (200, 10)
    kept = y != 0
    assert 0.5 < kept.mean() < 0.7
    np.testing.assert_allclose(y[kept], X[kept] / 0.6, rtol=1e-5)
    np.testing.assert_allclose(out, np.repeat(y.sum(axis=1, keepdims=True), 10, axis=1), rtol=1e-4)


def test_dropout_keep_prob_placeholder_fed_a_vector_fails_at_run_time():
    with tf.Graph().as_default():
        fed = v1.placeholder(tf.float32)
        y = npu_ops.dropout(tf.ones([4]), fed)
        with v1.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(y, {fed: [0.5, 0.5]})


def test_dropout_v4_mask_dtype():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="output_dtype must be tf.bool or tf.uint8, got float32"):
            npu_aicore_ops.dropout_v4(tf.ones([3]), 0.5, output_dtype=tf.float32)
    y = evaluate(lambda x: npu_aicore_ops.dropout_v4(x, 0.5, output_dtype=tf.uint8), [X])
    assert set(np.unique(y != 0)) == {False, True}


def test_generated_op_names_make_the_same_dropout():
    gen = helper.get_gen_ops()

    def build(x):
        mask = gen.drop_out_gen_mask(tf.shape(x), tf.constant(0.5), seed=1, seed2=2)
        return mask, gen.drop_out_do_mask(x, mask, tf.constant(0.5))

    mask, y = evaluate(build, [X])
    assert mask.dtype == np.uint8 and set(np.unique(mask)) == {0, 1}
    np.testing.assert_allclose(y, X * mask * 2.0, rtol=1e-6)


# --- activations ---------------------------------------------------------------------------------------------

V = np.linspace(-6, 6, 49)


def np_gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def np_gelu_derivative(x):
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
    return 0.5 * (1 + np.tanh(inner)) + 0.5 * x * (1 - np.tanh(inner) ** 2) * math.sqrt(2 / math.pi) * (
        1 + 3 * 0.044715 * x**2
    )


def test_gelu_and_its_gradient():
    def build(x):
        y = npu_unary_ops.gelu(x)
        return y, tf.gradients(y, x)[0], npu_unary_ops.gelu_grad(tf.ones_like(x), x, y)

    y, grad, gelu_grad = evaluate(build, [V])
    np.testing.assert_allclose(y, np_gelu(V), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, np_gelu_derivative(V), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gelu_grad, grad, rtol=1e-10, atol=1e-12)
    assert np.abs(y - V * 0.5 * (1 + ERF(V / math.sqrt(2)))).max() < 1e-3  # Gelu's tanh form is close to erf's


def test_fast_gelu_is_x_sigmoid_1702x_without_overflow():
    gen = npu_aicore_ops.npu_aicore_ops
    big = np.concatenate([V, [-1000.0, 1000.0]])

    def build(x):
        y = gen.fast_gelu(x)
        return y, tf.gradients(y, x)[0], gen.fast_gelu_grad(tf.ones_like(x), x)

    y, grad, fast_gelu_grad = evaluate(build, [big])
    sigmoid = np.exp(-np.logaddexp(0.0, -1.702 * big))
    np.testing.assert_allclose(y, big * sigmoid, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(grad, sigmoid + 1.702 * big * sigmoid * (1 - sigmoid), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fast_gelu_grad, grad, rtol=1e-9, atol=1e-12)


def test_fast_gelu_v2_polynomial():
    y, grad = evaluate(
        lambda x: (npu_aicore_ops.fast_gelu_v2(x), tf.gradients(npu_aicore_ops.fast_gelu_v2(x), x)[0]), [V]
    )
    z = np.minimum(np.abs(V) / math.sqrt(2), 1.769) - 1.769
    np.testing.assert_allclose(y, V * (np.sign(V + 1e-12) * (-0.1444 * z * z + 0.5) + 0.5), rtol=1e-12, atol=1e-12)
    assert np.abs(y - V * 0.5 * (1 + ERF(V / math.sqrt(2)))).max() < 0.02
    assert np.all(np.isfinite(grad))


def test_prelu_per_channel_and_gradients():
    x = RNG.randn(2, 3, 4, 4)
    weight = np.array([0.1, 0.2, 0.3])
    y = evaluate(npu_aicore_ops.prelu, [x, weight])
    np.testing.assert_allclose(y, np.where(x > 0, x, weight[None, :, None, None] * x))
    assert gradient_error(lambda t: npu_aicore_ops.prelu(t, tf.constant(weight)), x) < 1e-6
    assert gradient_error(lambda w: npu_aicore_ops.prelu(tf.constant(x), w), weight) < 1e-6
    with tf.Graph().as_default(), pytest.raises(ValueError, match="prelu: weight has 3 values but x"):
        npu_aicore_ops.prelu(tf.ones([2, 5]), tf.ones([3]))


# --- normalization -------------------------------------------------------------------------------------------


def test_layer_norm_values_statistics_and_gradients():
    x = RNG.randn(4, 6, 8)
    gamma, beta = RNG.randn(8), RNG.randn(8)
    y, mean, variance = evaluate(
        lambda t: npu_aicore_ops.layer_norm(t, gamma, beta, begin_norm_axis=-1, begin_params_axis=-1, epsilon=1e-7), [x]
    )
    expected_mean = x.mean(axis=-1, keepdims=True)
    expected_var = x.var(axis=-1, keepdims=True)
    np.testing.assert_allclose(mean, expected_mean)
    np.testing.assert_allclose(variance, expected_var)
    np.testing.assert_allclose(y, (x - expected_mean) / np.sqrt(expected_var + 1e-7) * gamma + beta, rtol=1e-7)
    assert gradient_error(lambda t: npu_aicore_ops.layer_norm(t, gamma, beta, 2, 2)[0], x) < 1e-6
    assert gradient_error(lambda g: npu_aicore_ops.layer_norm(tf.constant(x), g, beta, 2, 2)[0], gamma) < 1e-6
    with tf.Graph().as_default(), pytest.raises(ValueError, match="begin_norm_axis=3 is out of range"):
        npu_aicore_ops.layer_norm(tf.ones([2, 2, 2]), 1.0, 0.0, begin_norm_axis=3)


def test_centralization_and_its_gradient():
    x = RNG.randn(5, 7)
    y = evaluate(lambda t: npu_aicore_ops.centralization(t, [1]), [x])
    np.testing.assert_allclose(y, x - x.mean(axis=1, keepdims=True))
    assert gradient_error(lambda t: npu_aicore_ops.centralization(t, [0]), x) < 1e-6


# --- LARS ----------------------------------------------------------------------------------------------------


def np_trust(w, g, wd, eta=0.001, eps=1e-5):
    w_norm, g_norm = np.linalg.norm(w), np.linalg.norm(g)
    return eta * w_norm / (g_norm + wd * w_norm + eps) if w_norm > 0 and g_norm > 0 else 1.0


def test_lars_and_larsv2():
    weights = [RNG.randn(4, 3), np.zeros(5)]
    grads = [RNG.randn(4, 3), RNG.randn(5)]
    result = evaluate(lambda *t: npu_ops.LARS(list(t[:2]), list(t[2:]), weight_decay=0.01), weights + grads)
    for w, g, r in zip(weights, grads, result):
        np.testing.assert_allclose(r, np_trust(w, g, 0.01) * (g + 0.01 * w))
    w, g = weights[0], grads[0]
    plain, clipped = evaluate(
        lambda a, b: (npu_ops.LARSV2(a, b, 0.01, 1e-6), npu_ops.LARSV2(a, b, 0.01, 1e-6, use_clip=True)), [w, g]
    )
    np.testing.assert_allclose(plain, np_trust(w, g, 0.01) * (g + 0.01 * w))
    np.testing.assert_allclose(clipped, min(np_trust(w, g, 0.01) / 1e-6, 1.0) * (g + 0.01 * w))
    with tf.Graph().as_default(), pytest.raises(ValueError, match="inputs_w has 1 tensors but inputs_g has 2"):
        npu_ops.LARS([tf.ones(2)], [tf.ones(2), tf.ones(2)], 0.1)


# --- indexing ------------------------------------------------------------------------------------------------


def np_scatter_elements(data, indices, updates, axis):
    out = data.copy()
    for position in np.ndindex(*indices.shape):
        target = list(position)
        target[axis] = indices[position]
        out[tuple(target)] = updates[position]
    return out


@pytest.mark.parametrize(
    "axis, indices", [(0, [[1, 0, 2], [0, 2, 1]]), (1, [[1, 0, 2], [0, 2, 3]]), (-1, [[1, 0, 2], [0, 2, -1]])]
)  # no duplicate targets
def test_scatter_elements_and_gradients(axis, indices):
    data = RNG.randn(3, 4)
    indices = np.array(indices)
    updates = RNG.randn(2, 3)
    wrapped = np.where(indices < 0, indices + data.shape[axis], indices)
    result = evaluate(lambda d, u: npu_ops.scatter_elements(d, tf.constant(indices), u, axis=axis), [data, updates])
    np.testing.assert_allclose(result, np_scatter_elements(data, wrapped, updates, axis))
    assert (
        gradient_error(lambda u: npu_ops.scatter_elements(tf.constant(data), tf.constant(indices), u, axis), updates)
        < 1e-6
    )
    assert (
        gradient_error(lambda d: npu_ops.scatter_elements(d, tf.constant(indices), tf.constant(updates), axis), data)
        < 1e-6
    )


def test_scatter_elements_negative_indices_and_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="indices must be int32 or int64"):
            npu_ops.scatter_elements(tf.zeros([2]), tf.constant([0.5]), tf.zeros([1]))
        with pytest.raises(ValueError, match=r"indices \(2,\) and updates \(3,\) must have the same shape"):
            npu_ops.scatter_elements(tf.zeros([4]), tf.constant([0, 1]), tf.zeros([3]))
        with pytest.raises(ValueError, match="axis 2 is out of range for rank 1"):
            npu_ops.scatter_elements(tf.zeros([4]), tf.constant([0]), tf.zeros([1]), axis=2)


def test_nonzero():
    x = np.array([[0, 1.5, 0], [2.0, 0, -1.0]], np.float32)
    coordinates, transposed = evaluate(
        lambda t: (npu_aicore_ops.nonzero(t), npu_aicore_ops.nonzero(t, transpose=True, output_type=tf.int32)), [x]
    )
    np.testing.assert_array_equal(coordinates, np.argwhere(x))
    assert coordinates.dtype == np.int64 and transposed.dtype == np.int32
    np.testing.assert_array_equal(transposed, np.argwhere(x).T)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="output_type must be tf.int32 or tf.int64"):
        npu_aicore_ops.nonzero(tf.ones([2]), output_type=tf.float32)


def test_k_means_centroids():
    x, y = RNG.randn(20, 3), RNG.randn(4, 3)
    square_x, square_y = (x**2).sum(1, keepdims=True), (y**2).sum(1)[None, :]
    segment_sum, segment_count, total = evaluate(
        lambda *t: npu_ops.k_means_centroids(*t, use_actual_distance=True), [x, y, square_y, square_x]
    )
    distance = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    nearest = distance.argmin(1)
    for k in range(4):
        np.testing.assert_allclose(segment_sum[k], x[nearest == k].sum(0), atol=1e-12)
        assert segment_count[k, 0] == (nearest == k).sum()
    np.testing.assert_allclose(total, [distance.min(1).sum()])


# --- fused Adam ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("decay", [False, True])
def test_adam_apply_one_assign_updates_the_variables(decay):
    grad, m, w = (RNG.randn(5) for _ in range(3))
    v = RNG.rand(5)  # second moments are not negative
    beta1, beta2, lr, eps, wd = 0.9, 0.999, 0.01, 1e-8, 0.05
    graph = tf.Graph()
    with graph.as_default():
        variables = [tf.Variable(value) for value in (v, m, w)]
        if decay:
            outputs = npu_ops.adam_apply_one_with_decay_assign(
                tf.constant(grad), *variables, lr, beta1, 1 - beta1, beta2, 1 - beta2, wd, eps
            )
        else:
            outputs = npu_ops.adam_apply_one_assign(
                tf.constant(grad), *variables, lr, beta1, 1 - beta1, beta2, 1 - beta2, eps
            )
        with v1.Session(graph=graph) as sess:
            sess.run(v1.global_variables_initializer())
            returned = sess.run(outputs)
            stored = sess.run(variables)
    new_v = beta2 * v + (1 - beta2) * grad**2
    new_m = beta1 * m + (1 - beta1) * grad
    update = new_m / (np.sqrt(new_v) + eps) + (wd * w if decay else 0)
    for value in (returned, stored):
        np.testing.assert_allclose(value[0], new_v)
        np.testing.assert_allclose(value[1], new_m)
        np.testing.assert_allclose(value[2], w - lr * update)


def test_npu_convert_dropout_makes_keras_dropout_use_npu_dropout():
    import tf_keras

    from npu_bridge.estimator.npu import npu_convert_dropout  # noqa: F401  (patches Keras at import)

    graph = tf.Graph()
    with graph.as_default():
        x = tf.ones([100, 100])
        training = tf_keras.layers.Dropout(0.25, name="plain")(x, training=True)
        inference = tf_keras.layers.Dropout(0.25)(x, training=False)
        tf_keras.layers.Dropout(0.25, noise_shape=[100, 1], name="shaped")(x, training=True)
        op_names = [op.name for op in graph.get_operations()]
        with v1.Session(graph=graph) as sess:
            training_value, inference_value = sess.run([training, inference])
    assert any(name.startswith("plain/") and "DropOutDoMask" in name for name in op_names)
    assert not any(name.startswith("shaped/") and "DropOutDoMask" in name for name in op_names)  # Keras' own
    assert set(np.unique(training_value)) == {0.0, np.float32(1 / 0.75)}
    np.testing.assert_array_equal(inference_value, np.ones([100, 100]))
