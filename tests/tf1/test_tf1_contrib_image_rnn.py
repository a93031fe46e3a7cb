"""``tf.contrib.image``'s projective transforms and ``tf.contrib.rnn``'s extra cells of the TF1 mode, checked in
graph mode against NumPy references written here, and reached through the contrib shim."""

import importlib

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NotProvidedError, NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1 import aliases, contrib, rnn_cells, rnn_linear
from npu_bridge.core.tf1 import image_transforms as image

RNG = np.random.RandomState(7)


def run(fetches, init=False):
    """Runs ``fetches`` of the default graph in a fresh session (initialising the variables first with ``init``)."""
    with tf.compat.v1.Session() as session:
        if init:
            session.run(tf.compat.v1.global_variables_initializer())
        return session.run(fetches)


# ---------------------------------------------------------------- NumPy reference of a projective transform


def np_transform(images, transforms, interpolation="NEAREST"):
    """images [n, h, w, c]; transforms [1 or n, 8] mapping output (x, y) to input; outside the image is 0."""
    n, h, w, _ = images.shape
    out = np.zeros(images.shape, np.float64)
    ys, xs = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij")
    for b in range(n):
        a = np.asarray(transforms[b if len(transforms) > 1 else 0], np.float64)
        k = a[6] * xs + a[7] * ys + 1
        x_in, y_in = (a[0] * xs + a[1] * ys + a[2]) / k, (a[3] * xs + a[4] * ys + a[5]) / k

        def pixel(yy, xx, b=b):
            inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            values = images[b][np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
            return np.where(inside[..., None], values, 0)

        if interpolation == "NEAREST":  # half away from zero, as C's round
            out[b] = pixel(
                (np.sign(y_in) * np.floor(np.abs(y_in) + 0.5)).astype(int),
                (np.sign(x_in) * np.floor(np.abs(x_in) + 0.5)).astype(int),
            )
        else:
            y0, x0 = np.floor(y_in).astype(int), np.floor(x_in).astype(int)
            wy, wx = (y_in - y0)[..., None], (x_in - x0)[..., None]
            out[b] = (1 - wy) * ((1 - wx) * pixel(y0, x0) + wx * pixel(y0, x0 + 1)) + wy * (
                (1 - wx) * pixel(y0 + 1, x0) + wx * pixel(y0 + 1, x0 + 1)
            )
    return out


def np_rotation(angle, h, w):
    """Output -> input map of a counter-clockwise rotation about the centre, as 8 values: shift the centre to the
    origin, rotate, shift back (matrices, not the module's closed form)."""
    cx, cy = (w - 1) / 2, (h - 1) / 2
    to_origin = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]])
    back = np.array([[1, 0, cx], [0, 1, cy], [0, 0, 1]])
    turn = np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0], [0, 0, 1]])
    return (back @ turn @ to_origin).reshape(9)[:8]


def test_numpy_reference_rotates_by_90_degrees_like_rot90():
    square = RNG.rand(1, 5, 5, 1)
    assert np.allclose(np_transform(square, [np_rotation(np.pi / 2, 5, 5)])[0, ..., 0], np.rot90(square[0, ..., 0]))


# ---------------------------------------------------------------- image transforms


@pytest.mark.parametrize("interpolation", ["NEAREST", "BILINEAR"])
def test_rotate_by_90_degrees_is_rot90_for_every_rank(interpolation):
    square = RNG.rand(2, 6, 6, 3).astype(np.float32)
    with tf.Graph().as_default():
        rank4, rank3, rank2 = run(
            [
                image.rotate(square, np.pi / 2, interpolation),
                image.rotate(square[0], np.pi / 2, interpolation),
                image.rotate(square[0, ..., 0], np.pi / 2, interpolation),
            ]
        )
    expected = np.rot90(square, axes=(1, 2))
    assert rank4.shape == (2, 6, 6, 3) and rank4.dtype == np.float32
    np.testing.assert_allclose(rank4, expected, atol=1e-5)
    np.testing.assert_allclose(rank3, expected[0], atol=1e-5)
    np.testing.assert_allclose(rank2, expected[0, ..., 0], atol=1e-5)


@pytest.mark.parametrize("interpolation", ["NEAREST", "BILINEAR"])
def test_rotate_by_arbitrary_angles_per_image_matches_the_numpy_transform(interpolation):
    images = RNG.rand(2, 7, 9, 2).astype(np.float32)
    angles = np.array([0.3, -1.1], np.float32)
    with tf.Graph().as_default():
        got = run(image.rotate(images, angles, interpolation.lower()))  # upstream upper-cased the mode
    expected = np_transform(images, [np_rotation(a, 7, 9) for a in angles], interpolation)
    assert (got == 0).any() and not (expected[0] == images[0]).all()  # corners uncovered, really rotated
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_rotation_transforms_match_the_matrix_construction():
    with tf.Graph().as_default():
        scalar, vector = run(
            [
                image.angles_to_projective_transforms(0.7, 5, 8),
                image.angles_to_projective_transforms([0.7, 2.0], tf.constant(5), tf.constant(8)),
            ]
        )
    assert scalar.shape == (1, 8)
    np.testing.assert_allclose(vector, [np_rotation(0.7, 5, 8), np_rotation(2.0, 5, 8)], atol=1e-5)


def test_translate_moves_images_right_and_down_and_fills_zeros():
    images = RNG.rand(2, 4, 5, 1).astype(np.float32)
    with tf.Graph().as_default():
        one, each = run([image.translate(images, [2, 1]), image.translate(images, [[1, 0], [-1, 2]])])
    expected = np.zeros_like(images)
    expected[:, 1:, 2:] = images[:, :-1, :-2]
    np.testing.assert_allclose(one, expected)
    np.testing.assert_allclose(each[0, :, 1:], images[0, :, :-1])
    np.testing.assert_allclose(each[1, 2:, :-1], images[1, :-2, 1:])
    assert not each[0, :, 0].any() and not each[1, :2].any()


@pytest.mark.parametrize("interpolation", ["NEAREST", "BILINEAR"])
def test_transform_with_projective_matrices_for_ranks_2_3_and_4(interpolation):
    images = (RNG.rand(2, 6, 7, 3) * 255).astype(np.float32)
    transforms = np.array(
        [[0.9, 0.2, 0.7, -0.1, 1.1, 0.4, 0.01, 0.02], [1.2, -0.3, -0.5, 0.25, 0.8, 1.33, -0.02, 0.015]], np.float32
    )
    with tf.Graph().as_default():
        rank4, rank3, rank2 = run(
            [
                image.transform(images, transforms, interpolation),
                image.transform(images[1], transforms[1], interpolation),
                image.transform(images[0, ..., 1], transforms[0], interpolation),
            ]
        )
    expected = np_transform(images, transforms, interpolation)
    assert rank4.shape == images.shape and rank3.shape == images.shape[1:] and rank2.shape == images.shape[1:3]
    np.testing.assert_allclose(rank4, expected, atol=1e-3)
    np.testing.assert_allclose(rank3, expected[1], atol=1e-3)
    np.testing.assert_allclose(rank2, expected[0, ..., 1], atol=1e-3)


def test_transform_keeps_integer_dtypes_and_takes_an_output_shape():
    images = np.arange(2 * 4 * 4, dtype=np.uint8).reshape(2, 4, 4, 1)
    with tf.Graph().as_default():
        got = run(image.transform(images, [1, 0, 1, 0, 1, 0, 0, 0], output_shape=[3, 2]))
    assert got.dtype == np.uint8 and got.shape == (2, 3, 2, 1)
    np.testing.assert_array_equal(got, images[:, :3, 1:3])


def test_composed_transform_equals_applying_the_transforms_in_turn():
    images = RNG.rand(2, 6, 6, 2).astype(np.float32)
    with tf.Graph().as_default():
        turn = image.angles_to_projective_transforms([np.pi / 2, -np.pi / 2], 6, 6)
        shift = image.translations_to_projective_transforms([[1, 2], [-2, 1]])
        composed = image.compose_transforms(turn, shift)
        one_go = image.transform(images, composed)
        in_turn = image.transform(image.transform(images, turn), shift)
        flat, single, got_one_go, got_in_turn = run([composed, image.compose_transforms(turn), one_go, in_turn])
        turn_value, shift_value = run([turn, shift])
    assert got_one_go.any()
    np.testing.assert_allclose(got_one_go, got_in_turn, atol=1e-5)
    np.testing.assert_allclose(single, turn_value, atol=1e-6)
    matrices = [np.append(t, 1).reshape(3, 3) @ np.append(s, 1).reshape(3, 3) for t, s in zip(turn_value, shift_value)]
    np.testing.assert_allclose(flat, [m.reshape(9)[:8] / m[2, 2] for m in matrices], atol=1e-5)


def test_matrices_and_flat_transforms_convert_both_ways():
    flat = np.array([[2.0, 0.5, 1, 0, 3, -1, 0.1, 0.2]], np.float32)
    with tf.Graph().as_default():
        matrices, back, scaled = run(
            [
                image.flat_transforms_to_matrices(flat[0]),
                image.matrices_to_flat_transforms(image.flat_transforms_to_matrices(flat)),
                image.matrices_to_flat_transforms(np.append(flat[0], 1).reshape(3, 3) * 4),
            ]
        )
    np.testing.assert_allclose(matrices, [np.append(flat[0], 1).reshape(3, 3)])
    np.testing.assert_allclose(back, flat)
    np.testing.assert_allclose(scaled, flat, rtol=1e-6)


def test_bad_arguments_raise_the_projects_errors_naming_them():
    images = np.zeros((4, 4), np.float32)
    with tf.Graph().as_default():
        with pytest.raises(NpuArgumentError, match=r"interpolation has invalid value 'CUBIC'.*NEAREST.*BILINEAR"):
            image.rotate(images, 0.5, "CUBIC")
        with pytest.raises(ValueError, match="interpolation"):  # what upstream's callers catch
            image.transform(images, [1, 0, 0, 0, 1, 0, 0, 0], interpolation="LINEAR")
        with pytest.raises(NpuArgumentTypeError, match="interpolation must be a string"):
            image.translate(images, [1, 1], interpolation=1)
        with pytest.raises(NpuArgumentTypeError, match="images must have rank 2"):
            image.rotate(np.zeros((1, 1, 4, 4, 1), np.float32), 0.5)
        with pytest.raises(NpuArgumentTypeError, match="images has dtype string"):
            image.rotate(tf.constant([["a"]]), 0.5)
        with pytest.raises(NpuArgumentError, match="transforms must have 8 values per row"):
            image.transform(images, [1, 0, 0, 1])
        with pytest.raises(NpuArgumentError, match="output_shape must be a 1-D tensor of 2 values"):
            image.transform(images, [1, 0, 0, 0, 1, 0, 0, 0], output_shape=[1, 2, 3])
        with pytest.raises(NpuArgumentError, match="at least one transform"):
            image.compose_transforms()
        with pytest.raises(NpuArgumentTypeError, match="angles must have rank 0 or 1"):
            image.angles_to_projective_transforms([[0.5]], 4, 4)


def test_v2_op_of_gen_image_ops_fills_with_zeros():
    images = np.ones((1, 3, 3, 1), np.float32)
    with tf.Graph().as_default():
        got = run(
            image.ops.gen_image_ops.image_projective_transform_v2(images, [[1, 0, 1, 0, 1, 0, 0, 0]], [3, 3], "NEAREST")
        )
    np.testing.assert_array_equal(got[0, ..., 0], [[1, 1, 0], [1, 1, 0], [1, 1, 0]])


def test_first_op_of_gen_image_ops_keeps_the_input_size():
    images = np.arange(1, 13, dtype=np.int32).reshape(1, 3, 4, 1)
    with tf.Graph().as_default():
        ops = image.ops.gen_image_ops
        identity, shifted = run(
            [
                ops.image_projective_transform(images, [[1, 0, 0, 0, 1, 0, 0, 0]], interpolation="NEAREST"),
                ops.image_projective_transform(images, [[1, 0, -1, 0, 1, 0, 0, 0]], "NEAREST"),
            ]
        )
    np.testing.assert_array_equal(identity, images)
    assert shifted.dtype == np.int32  # the output (x, y) reads the input (x - 1, y): one column right, zeros enter
    np.testing.assert_array_equal(shifted[0, ..., 0], [[0, 1, 2, 3], [0, 5, 6, 7], [0, 9, 10, 11]])


@pytest.mark.parametrize(
    "num_valid_rows, top_k, rows, columns",
    [
        (2, -1, [2, 1], [-1, 1, 0]),  # 0.1 (row 0, column 2) first, then 0.2 (row 1, column 1)
        (1, -1, [2, -1], [-1, -1, 0]),
        (0, -1, [-1, -1], [-1, -1, -1]),
        (-1, -1, [2, 1], [-1, 1, 0]),  # negative: every row
        ([2.0], 1, [2, -1], [-1, -1, 0]),  # one match only; a one-element list
    ],
)
def test_bipartite_match_pairs_the_smallest_free_distances_first(num_valid_rows, top_k, rows, columns):
    distances = np.array([[0.5, 0.8, 0.1], [0.3, 0.2, 0.15]], np.float32)
    with tf.Graph().as_default():
        row_match, column_match = image.bipartite_match(distances, num_valid_rows, top_k=top_k)
        assert row_match.shape == (2,) and column_match.shape == (3,) and row_match.dtype == tf.int32
        got = run([row_match, column_match])
    np.testing.assert_array_equal(got[0], rows)
    np.testing.assert_array_equal(got[1], columns)


def test_bipartite_match_breaks_ties_by_row_then_column_and_checks_its_arguments():
    with tf.Graph().as_default():
        got = run(image.bipartite_match(tf.ones([3, 2]), -1))
        fed = tf.compat.v1.placeholder(tf.float32, [])
        too_many = image.bipartite_match(tf.ones([2, 2]), fed)
        with tf.compat.v1.Session() as session, pytest.raises(tf.errors.InvalidArgumentError, match="at most 2"):
            session.run(too_many, {fed: 3.0})
    np.testing.assert_array_equal(got[0], [0, 1, -1])
    np.testing.assert_array_equal(got[1], [0, 1])
    with pytest.raises(NpuArgumentError, match=r"num_valid_rows is 3, but distance_mat has only 2 rows"):
        image.bipartite_match(tf.ones([2, 2]), 3)
    with pytest.raises(NpuArgumentError, match=r"distance_mat has shape \(2,\); it must be \[num_rows, num_columns\]"):
        image.bipartite_match(tf.ones([2]), 1)
    with pytest.raises(NpuArgumentError, match=r"num_valid_rows has shape \(2,\); it must hold one value"):
        image.bipartite_match(tf.ones([2, 2]), [1.0, 2.0])


# ---------------------------------------------------------------- RNN cells


def variables(session, scope=""):
    """{name without ':0' and without ``scope/``: value} of the global variables below ``scope``."""
    found = {v.op.name: v for v in tf.compat.v1.global_variables() if v.op.name.startswith(scope)}
    values = session.run(found)
    return {name[len(scope) :].lstrip("/"): value for name, value in values.items()}


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_layer_norm(x, gamma, beta):
    mean, variance = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(variance + 1e-12) * gamma + beta


def np_layer_norm_lstm_step(x, c, h, weights, forget_bias=1.0):
    """One step of an LSTM with layer-normalized gates and cell (the state keeps the normalized cell)."""
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ weights["kernel"], 4, axis=1)
    i, j, f, o = (
        np_layer_norm(v, weights[f"{s}/gamma"], weights[f"{s}/beta"])
        for v, s in zip((i, j, f, o), ("input", "transform", "forget", "output"))
    )
    new_c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
    new_c = np_layer_norm(new_c, weights["state/gamma"], weights["state/beta"])
    return np.tanh(new_c) * sigmoid(o), new_c


LN_NAMES = {"kernel"} | {
    f"{g}/{p}" for g in ("input", "transform", "forget", "output", "state") for p in ("gamma", "beta")
}


def randomize(session, scope):
    """Gives every gamma and beta below ``scope`` its own random values, so a mixed-up gate shows."""
    for v in tf.compat.v1.global_variables():
        if v.op.name.startswith(scope) and v.op.name.endswith(("gamma", "beta")):
            v.load(RNG.uniform(0.5, 1.5, v.shape), session)


def test_layer_norm_lstm_cell_one_step_matches_numpy_and_names_its_variables():
    x, c, h = RNG.randn(3, 5), RNG.randn(3, 4), RNG.randn(3, 4)
    with tf.Graph().as_default():
        cell = rnn_cells.LayerNormBasicLSTMCell(4, forget_bias=0.5, norm_gain=1.5, norm_shift=0.25)
        with tf.compat.v1.variable_scope("one"):
            output, state = cell(tf.constant(x), tf.compat.v1.nn.rnn_cell.LSTMStateTuple(tf.constant(c), h))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            initial = variables(session, "one/layer_norm_basic_lstm_cell")
            randomize(session, "one")
            weights = variables(session, "one/layer_norm_basic_lstm_cell")
            got_h, got_state = session.run([output, state])
    assert set(initial) == LN_NAMES  # no bias with layer norm, as TF 1.15
    assert initial["kernel"].shape == (9, 16) and (initial["forget/gamma"] == 1.5).all()
    assert (initial["state/beta"] == 0.25).all()
    assert isinstance(got_state, tf.compat.v1.nn.rnn_cell.LSTMStateTuple)
    expected_h, expected_c = np_layer_norm_lstm_step(x, c, h, weights, forget_bias=0.5)
    np.testing.assert_allclose(got_h, expected_h, atol=1e-5)
    np.testing.assert_allclose(got_state.c, expected_c, atol=1e-5)
    np.testing.assert_allclose(got_state.h, expected_h, atol=1e-5)


def test_layer_norm_lstm_cell_in_dynamic_rnn_matches_three_numpy_steps():
    x = RNG.randn(2, 3, 5).astype(np.float32)
    with tf.Graph().as_default():
        cell = rnn_cells.LayerNormBasicLSTMCell(4)
        outputs, final = tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            randomize(session, "rnn")
            weights = variables(session, "rnn/layer_norm_basic_lstm_cell")
            got, got_final = session.run([outputs, final])
    assert set(weights) == LN_NAMES
    c = h = np.zeros((2, 4))
    for t in range(3):
        h, c = np_layer_norm_lstm_step(x[:, t], c, h, weights)
        np.testing.assert_allclose(got[:, t], h, atol=1e-5)
    np.testing.assert_allclose(got_final.c, c, atol=1e-5)


def test_layer_norm_lstm_cell_without_layer_norm_is_a_basic_lstm_with_bias_and_checks_keep_prob():
    x, c, h = RNG.randn(2, 3), RNG.randn(2, 2), RNG.randn(2, 2)
    with tf.Graph().as_default():
        cell = rnn_cells.LayerNormBasicLSTMCell(2, layer_norm=False, dropout_keep_prob=tf.constant(1.0, tf.float64))
        output, state = cell(tf.constant(x), (tf.constant(c), tf.constant(h)))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            weights = variables(session, "layer_norm_basic_lstm_cell")
            weights["bias"] = RNG.randn(8)
            next(v for v in tf.compat.v1.global_variables() if v.op.name.endswith("bias")).load(
                weights["bias"], session
            )
            got_h, got_state = session.run([output, state])
    assert set(weights) == {"kernel", "bias"}
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ weights["kernel"] + weights["bias"], 4, axis=1)
    new_c = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
    np.testing.assert_allclose(got_state.c, new_c, atol=1e-6)
    np.testing.assert_allclose(got_h, np.tanh(new_c) * sigmoid(o), atol=1e-6)
    with pytest.raises(NpuArgumentError, match=r"dropout_keep_prob must be in \(0, 1\], got 1.5"):
        rnn_cells.LayerNormBasicLSTMCell(2, dropout_keep_prob=1.5)
    with pytest.raises(NpuArgumentTypeError, match="num_units must be an int"):
        rnn_cells.LayerNormBasicLSTMCell("4")


def test_layer_norm_lstm_cell_drops_candidates_with_a_keep_probability_below_one():
    x = RNG.randn(8, 3)
    with tf.Graph().as_default():
        cell = rnn_cells.LayerNormBasicLSTMCell(16, layer_norm=False, dropout_keep_prob=0.5, dropout_prob_seed=1)
        zeros = tf.zeros([8, 16], tf.float64)
        _, state = cell(tf.constant(x), (zeros, zeros))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            weights = variables(session, "layer_norm_basic_lstm_cell")
            got_c = session.run(state.c)
    i, j, _, _ = np.split(x @ weights["kernel"][:3] + weights["bias"], 4, axis=1)
    kept = 2 * sigmoid(i) * np.tanh(j)  # c starts at 0; kept candidates are scaled by 1 / keep_prob
    dropped = np.isclose(got_c, 0)
    assert 0.2 < dropped.mean() < 0.8
    np.testing.assert_allclose(got_c[~dropped], kept[~dropped], atol=1e-6)
    with tf.Graph().as_default():
        cell = rnn_cells.LayerNormBasicLSTMCell(4)
        cell(tf.ones([1, 3]), (tf.zeros([1, 4]), tf.zeros([1, 4])))
        assert not any("dropout" in op.name for op in tf.compat.v1.get_default_graph().get_operations())


def test_layer_norm_basic_lstm_cell_takes_kernel_and_bias_from_the_scopes_initializer():
    # TensorFlow 1.15 made both with the variable scope's initializer: with 0.5 everywhere, the bias is 0.5 too.
    x, c, h = np.ones((1, 2)), np.array([[0.0, 0.1]]), np.array([[0.2, 0.3]])
    with tf.Graph().as_default():
        with tf.compat.v1.variable_scope("root", initializer=tf.compat.v1.constant_initializer(0.5)):
            cell = rnn_cells.LayerNormBasicLSTMCell(2, layer_norm=False)
            output, state = cell(tf.constant(x), (tf.constant(c), tf.constant(h)))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            weights = variables(session, "root/layer_norm_basic_lstm_cell")
            got_h, got_state = session.run([output, state])
    assert (weights["bias"] == 0.5).all() and (weights["kernel"] == 0.5).all()
    gate = 0.5 * (1 + 1 + 0.2 + 0.3) + 0.5  # every gate: the inputs and h times 0.5, plus the bias
    new_c = c * sigmoid(gate + 1.0) + sigmoid(gate) * np.tanh(gate)
    np.testing.assert_allclose(got_state.c, new_c, atol=1e-6)
    np.testing.assert_allclose(got_h, np.tanh(new_c) * sigmoid(gate), atol=1e-6)


def np_layer_norm_lstm_cell_step(x, c, m, weights, layer_norm, peepholes, cell_clip=None, proj_clip=None):
    """One step of LayerNormLSTMCell as TensorFlow 1.15 computes it (forget bias 1, tanh)."""
    gates = np.concatenate([x, m], 1) @ weights["kernel"]
    i, j, f, o = np.split(gates if layer_norm else gates + weights["bias"], 4, axis=1)
    if layer_norm:
        i, j, f, o = (
            np_layer_norm(v, weights[f"{s}/gamma"], weights[f"{s}/beta"])
            for v, s in zip((i, j, f, o), ("input", "transform", "forget", "output"))
        )
    if peepholes:
        f, i = f + weights["w_f_diag"] * c, i + weights["w_i_diag"] * c
    new_c = sigmoid(f + 1.0) * c + sigmoid(i) * np.tanh(j)
    if layer_norm:
        new_c = np_layer_norm(new_c, weights["state/gamma"], weights["state/beta"])
    if cell_clip is not None:
        new_c = np.clip(new_c, -cell_clip, cell_clip)
    new_m = sigmoid(o + weights["w_o_diag"] * new_c if peepholes else o) * np.tanh(new_c)
    if "projection/kernel" in weights:
        new_m = new_m @ weights["projection/kernel"]
        if proj_clip is not None:
            new_m = np.clip(new_m, -proj_clip, proj_clip)
    return new_m, new_c


@pytest.mark.parametrize("layer_norm", [True, False])
@pytest.mark.parametrize("peepholes, num_proj", [(False, None), (True, 3)])
def test_layer_norm_lstm_cell_matches_numpy_over_three_steps_and_names_its_variables(layer_norm, peepholes, num_proj):
    x = RNG.randn(2, 3, 5)
    clips = {"cell_clip": 0.75, "proj_clip": 0.25} if peepholes else {}
    with tf.Graph().as_default():
        cell = rnn_cells.LayerNormLSTMCell(
            4, use_peepholes=peepholes, num_proj=num_proj, layer_norm=layer_norm, norm_gain=1.5, **clips
        )
        assert cell.output_size == (num_proj or 4) and tuple(cell.state_size) == (4, num_proj or 4)
        outputs, final = tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float64)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            initial = variables(session, "rnn/layer_norm_lstm_cell")
            for v in tf.compat.v1.global_variables():  # random values everywhere, so a mixed-up gate shows
                v.load(RNG.uniform(-1, 1, v.shape), session)
            weights = variables(session, "rnn/layer_norm_lstm_cell")
            got, got_final = session.run([outputs, final])
    names = {"kernel", "bias"}  # the bias exists with layer norm too (unused), as in TensorFlow 1.15
    names |= (LN_NAMES - {"kernel"}) if layer_norm else set()
    names |= {"w_f_diag", "w_i_diag", "w_o_diag"} if peepholes else set()
    names |= {"projection/kernel"} if num_proj else set()
    assert set(initial) == names
    assert initial["kernel"].shape == (5 + (num_proj or 4), 16) and not initial["bias"].any()
    if layer_norm:
        assert (initial["forget/gamma"] == 1.5).all() and not initial["state/beta"].any()
    c, m = np.zeros((2, 4)), np.zeros((2, num_proj or 4))
    for t in range(3):
        m, c = np_layer_norm_lstm_cell_step(x[:, t], c, m, weights, layer_norm, peepholes, **clips)
        np.testing.assert_allclose(got[:, t], m, atol=1e-6)
    np.testing.assert_allclose(got_final.c, c, atol=1e-6)
    if peepholes:
        assert np.abs(got).max() <= 0.25 and np.abs(got_final.c).max() <= 0.75


def test_layer_norm_lstm_cell_takes_its_initializer_for_the_kernel():
    with tf.Graph().as_default():
        cell = rnn_cells.LayerNormLSTMCell(2, initializer=tf.compat.v1.constant_initializer(0.25), layer_norm=True)
        cell(tf.ones([1, 3]), (tf.zeros([1, 2]), tf.zeros([1, 2])))
        weights = run({v.op.name: v for v in tf.compat.v1.global_variables()}, init=True)
    assert (weights["layer_norm_lstm_cell/kernel"] == 0.25).all()
    assert (weights["layer_norm_lstm_cell/input/gamma"] == 1.0).all()
    with pytest.raises(NpuArgumentError, match="num_proj must be positive, got 0"):
        rnn_cells.LayerNormLSTMCell(2, num_proj=0)


def np_nas_step(x, c, h, weights, num_proj):
    xs = np.split(x @ weights["kernel"], 8, axis=1)
    ms = np.split(h @ weights["recurrent_kernel"] + weights.get("bias", 0), 8, axis=1)
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    first = [
        sigmoid(xs[0] + ms[0]),
        relu(xs[1] + ms[1]),
        sigmoid(xs[2] + ms[2]),
        relu(xs[3] * ms[3]),
        np.tanh(xs[4] + ms[4]),
        sigmoid(xs[5] + ms[5]),
        np.tanh(xs[6] + ms[6]),
        sigmoid(xs[7] + ms[7]),
    ]
    second = [
        np.tanh(first[0] * first[1]),
        np.tanh(first[2] + first[3]),
        np.tanh(first[4] * first[5]),
        sigmoid(first[6] + first[7]),
    ]
    new_c = np.tanh(second[0] + c) * second[1]
    new_h = np.tanh(new_c * np.tanh(second[2] + second[3]))
    return (new_h @ weights["projection_weights"] if num_proj else new_h), new_c


@pytest.mark.parametrize("num_proj", [None, 3])
def test_nas_cell_shapes_and_one_step_match_numpy(num_proj):
    x = RNG.randn(2, 4, 5).astype(np.float32)
    with tf.Graph().as_default():
        cell = rnn_cells.NASCell(6, num_proj=num_proj, use_bias=True)
        assert cell.output_size == (num_proj or 6) and tuple(cell.state_size) == (6, num_proj or 6)
        outputs, final = tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            weights = variables(session, "rnn/nas_cell")
            weights["bias"] = RNG.randn(48)
            next(v for v in tf.compat.v1.global_variables() if v.op.name.endswith("bias")).load(
                weights["bias"], session
            )
            got, got_final = session.run([outputs, final])
    expected_names = {"kernel", "recurrent_kernel", "bias"} | ({"projection_weights"} if num_proj else set())
    assert set(weights) == expected_names
    assert weights["kernel"].shape == (5, 48) and weights["recurrent_kernel"].shape == (num_proj or 6, 48)
    assert got.shape == (2, 4, num_proj or 6) and got_final.c.shape == (2, 6)
    c, h = np.zeros((2, 6)), np.zeros((2, num_proj or 6))
    for t in range(4):
        h, c = np_nas_step(x[:, t], c, h, weights, num_proj)
        np.testing.assert_allclose(got[:, t], h, atol=1e-5)
    np.testing.assert_allclose(got_final.c, c, atol=1e-5)


def test_nas_cell_without_biases_has_no_bias_variable():
    with tf.Graph().as_default():
        rnn_cells.NASCell(3)(tf.ones([1, 2]), (tf.zeros([1, 3]), tf.zeros([1, 3])))
        assert sorted(v.op.name for v in tf.compat.v1.global_variables()) == [
            "nas_cell/kernel",
            "nas_cell/recurrent_kernel",
        ]
    with pytest.raises(NpuArgumentError, match="num_proj must be positive, got 0"):
        rnn_cells.NASCell(3, num_proj=0)


def test_stack_bidirectional_dynamic_rnn_stacks_layers_in_their_scopes():
    x = RNG.randn(2, 5, 3).astype(np.float32)
    lstm, gru = tf.compat.v1.nn.rnn_cell.LSTMCell, tf.compat.v1.nn.rnn_cell.GRUCell
    with tf.Graph().as_default():
        outputs, states_fw, states_bw = rnn_cells.stack_bidirectional_dynamic_rnn(
            [lstm(4), gru(2)], [lstm(3), gru(5)], x, dtype=tf.float32, sequence_length=[5, 2]
        )
        assert isinstance(states_fw, tuple) and isinstance(states_bw, tuple)
        assert len(states_fw) == len(states_bw) == 2
        names = {v.op.name: v.shape.as_list() for v in tf.compat.v1.global_variables()}
        got, fw, bw = run([outputs, states_fw, states_bw], init=True)
    assert got.shape == (2, 5, 7)
    assert not got[1, 2:].any() and got[1, :2].all()  # past the sequence length
    assert fw[0].c.shape == (2, 4) and bw[0].h.shape == (2, 3) and fw[1].shape == (2, 2) and bw[1].shape == (2, 5)
    assert names["stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/lstm_cell/kernel"] == [3 + 4, 16]
    assert names["stack_bidirectional_rnn/cell_0/bidirectional_rnn/bw/lstm_cell/kernel"] == [3 + 3, 12]
    # the second layer reads both directions of the first: depth 4 + 3
    assert names["stack_bidirectional_rnn/cell_1/bidirectional_rnn/fw/gru_cell/gates/kernel"] == [7 + 2, 4]
    assert names["stack_bidirectional_rnn/cell_1/bidirectional_rnn/bw/gru_cell/candidate/kernel"] == [7 + 5, 5]


def test_stack_bidirectional_rnn_over_time_steps_equals_the_dynamic_version_with_the_same_weights():
    x = RNG.randn(2, 4, 3)
    lengths = [4, 2]

    def cells():
        lstm, gru = tf.compat.v1.nn.rnn_cell.LSTMCell, tf.compat.v1.nn.rnn_cell.GRUCell
        return [lstm(4), gru(2)], [lstm(3), gru(5)]

    with tf.Graph().as_default():
        with tf.compat.v1.variable_scope("static"):
            outputs, states_fw, states_bw = rnn_cells.stack_bidirectional_rnn(
                *cells(), tf.unstack(tf.constant(x), axis=1), dtype=tf.float64, sequence_length=lengths
            )
        with tf.compat.v1.variable_scope("dynamic"):
            dynamic, dynamic_fw, dynamic_bw = rnn_cells.stack_bidirectional_dynamic_rnn(
                *cells(), tf.constant(x), dtype=tf.float64, sequence_length=lengths
            )
        static_vars = {v.op.name: v for v in tf.compat.v1.global_variables() if v.op.name.startswith("static/")}
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for v in tf.compat.v1.global_variables():  # the dynamic layers get the static layers' weights
                if v.op.name.startswith("dynamic/"):
                    twin = v.op.name.replace("dynamic/", "static/").replace("/bidirectional_rnn/", "/")
                    v.load(session.run(static_vars[twin]), session)
            got, want = session.run([(outputs, states_fw, states_bw), (dynamic, dynamic_fw, dynamic_bw)])
    # TensorFlow 1.15's names: the layers' fw / bw scopes sit right below cell_<i>
    assert "static/stack_bidirectional_rnn/cell_0/fw/lstm_cell/kernel" in static_vars
    assert static_vars["static/stack_bidirectional_rnn/cell_1/bw/gru_cell/gates/kernel"].shape == [7 + 5, 10]
    assert isinstance(got[0], list) and len(got[0]) == 4 and got[0][0].shape == (2, 7)
    np.testing.assert_allclose(np.stack(got[0], axis=1), want[0], atol=1e-10)
    for static_state, dynamic_state in zip(got[1] + got[2], want[1] + want[2]):
        np.testing.assert_allclose(np.asarray(static_state), np.asarray(dynamic_state), atol=1e-10)
    with pytest.raises(NpuArgumentTypeError, match="inputs must be a non-empty list of time steps"):
        rnn_cells.stack_bidirectional_rnn(*cells(), tf.constant(x), dtype=tf.float64)


def test_nas_cell_runs_in_a_keras_rnn_layer_with_a_zero_bias():
    with tf.Graph().as_default():
        cell = rnn_cells.NASCell(10, use_bias=True)
        layer = tf.compat.v1.keras.layers.RNN(cell)
        outputs = layer(tf.constant(RNG.rand(2, 3, 5), tf.float32))
        got, bias = run([outputs, cell.weights[2]], init=True)
    assert got.shape == (2, 10) and [w.name.split("/")[-1] for w in cell.weights] == [
        "recurrent_kernel:0",
        "kernel:0",
        "bias:0",
    ]
    assert not bias.any()


def test_stack_bidirectional_dynamic_rnn_checks_its_cell_lists():
    x = tf.zeros([1, 2, 3])
    cell = tf.compat.v1.nn.rnn_cell.GRUCell
    with pytest.raises(NpuArgumentError, match="cells_bw must have as many entries as cells_fw"):
        rnn_cells.stack_bidirectional_dynamic_rnn([cell(2)], [cell(2), cell(2)], x, dtype=tf.float32)
    with pytest.raises(NpuArgumentError, match="at least one cell"):
        rnn_cells.stack_bidirectional_dynamic_rnn([], [], x, dtype=tf.float32)
    with pytest.raises(NpuArgumentTypeError, match="cells_fw must be a list"):
        rnn_cells.stack_bidirectional_dynamic_rnn(cell(2), [cell(2)], x, dtype=tf.float32)
    with pytest.raises(NpuArgumentError, match="initial_states_fw must have as many entries as cells_fw"):
        rnn_cells.stack_bidirectional_dynamic_rnn([cell(2)], [cell(2)], x, initial_states_fw=[], dtype=tf.float32)


def test_linear_creates_kernel_and_bias_in_the_current_scope_and_computes_the_affine_map():
    a, b = RNG.randn(3, 2), RNG.randn(3, 4)
    with tf.Graph().as_default():
        with tf.compat.v1.variable_scope("lin"):
            linear = rnn_linear._Linear(
                [tf.constant(a), tf.constant(b)], 5, True, bias_initializer=tf.compat.v1.constant_initializer(0.5)
            )
        with tf.compat.v1.variable_scope("single"):
            single = rnn_linear._Linear(tf.constant(a), 2, build_bias=False)
        names = {v.op.name: v.shape.as_list() for v in tf.compat.v1.global_variables()}
        result, single_result = linear([tf.constant(a), tf.constant(b)]), single(tf.constant(a))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            weights, single_weights = variables(session, "lin"), variables(session, "single")
            got, got_single = session.run([result, single_result])
    assert names == {"lin/kernel": [6, 5], "lin/bias": [5], "single/kernel": [2, 2]}
    assert (weights["bias"] == 0.5).all()
    np.testing.assert_allclose(got, np.concatenate([a, b], 1) @ weights["kernel"] + 0.5)
    np.testing.assert_allclose(got_single, a @ single_weights["kernel"])
    with tf.Graph().as_default():
        with pytest.raises(NpuArgumentError, match="args must be 2-D tensors"):
            rnn_linear._Linear(tf.zeros([3]), 2, True)
        with pytest.raises(NpuArgumentError, match="non-empty list"):
            rnn_linear._Linear([], 2, True)


# ---------------------------------------------------------------- through the contrib shim


def test_contrib_image_and_rnn_routes_lead_here_and_name_what_they_lack():
    root = contrib.ContribModule("", None, tf)
    assert root.image.rotate is image.rotate
    assert root.image.python.ops.image_ops.translate is image.translate
    assert root.image.compose_transforms is image.compose_transforms
    v2 = root.image.ops.gen_image_ops.image_projective_transform_v2
    assert v2 is image.image_projective_transform_v2
    assert root.rnn.LayerNormBasicLSTMCell is rnn_cells.LayerNormBasicLSTMCell
    assert root.rnn.NASCell is rnn_cells.NASCell
    assert root.rnn.stack_bidirectional_dynamic_rnn is rnn_cells.stack_bidirectional_dynamic_rnn
    assert root.rnn.stack_bidirectional_rnn is rnn_cells.stack_bidirectional_rnn
    assert root.rnn.python.ops.rnn.stack_bidirectional_rnn is rnn_cells.stack_bidirectional_rnn
    assert root.rnn.LayerNormLSTMCell is rnn_cells.LayerNormLSTMCell
    assert root.rnn.python.ops.core_rnn_cell._Linear is rnn_linear._Linear
    assert root.rnn.python.ops.rnn_cell._Linear is rnn_linear._Linear
    assert (
        root.rnn.ops.gen_lstm_ops.block_lstm is importlib.import_module("tensorflow.python.ops.gen_rnn_ops").block_lstm
    )
    assert root.rnn.BasicLSTMCell is tf.compat.v1.nn.rnn_cell.BasicLSTMCell  # TensorFlow's places come first
    assert root.image.python.ops.image_ops.bipartite_match is image.bipartite_match
    with pytest.raises(NotProvidedError, match=r"tf\.contrib\.image\.connected_components is not provided"):
        root.image.python.ops.image_ops.connected_components  # noqa: B018
    with pytest.raises(NotProvidedError, match=r"tf\.contrib\.rnn\.GridLSTMCell is not provided"):
        root.rnn.python.ops.rnn_cell.GridLSTMCell  # noqa: B018
    assert "image" not in contrib.UNROUTED


def test_contrib_rnn_serves_the_projection_and_embedding_wrappers():
    from npu_bridge.core.tf1.legacy_seq2seq import wrappers

    root = contrib.ContribModule("", None, tf)
    assert root.rnn.OutputProjectionWrapper is wrappers.OutputProjectionWrapper
    assert root.rnn.python.ops.core_rnn_cell.EmbeddingWrapper is wrappers.EmbeddingWrapper
    with tf.Graph().as_default():
        cell = root.rnn.OutputProjectionWrapper(tf.compat.v1.nn.rnn_cell.GRUCell(4), 7)
        outputs, _ = tf.compat.v1.nn.dynamic_rnn(cell, tf.ones([2, 5, 3]), dtype=tf.float32)
        assert outputs.shape.as_list() == [2, 5, 7]
        assert run(outputs, init=True).shape == (2, 5, 7)


def test_rnn_cell_impl_linear_alias_points_at_the_helper():
    (home, name) = aliases.MOVED[("tensorflow.python.ops.rnn_cell_impl", "_Linear")]
    assert getattr(importlib.import_module(home), name) is rnn_linear._Linear
    # add-only: TensorFlow 2.21's rnn_cell_impl does not have it, so the alias is what scripts get
    assert not hasattr(importlib.import_module("tensorflow.python.ops.rnn_cell_impl"), "_Linear") or (
        importlib.import_module("tensorflow.python.ops.rnn_cell_impl")._Linear is rnn_linear._Linear
    )


def test_a_star_import_of_a_contrib_module_binds_its_names_and_never_a_builtin(monkeypatch):
    # DIEN in the zoo subclasses RNNCell after `from tensorflow.contrib.rnn import *`
    rnn = contrib.ContribModule("rnn", contrib.ROUTES["rnn"], tf)
    monkeypatch.setitem(__import__("sys").modules, "star_probe_rnn", rnn)
    monkeypatch.setattr(contrib, "_told", set())  # binding LSTMBlockCell says its difference once: not for others
    namespace = {}
    exec("from star_probe_rnn import *", namespace)
    assert namespace["RNNCell"] is tf.compat.v1.nn.rnn_cell.RNNCell
    assert namespace["static_rnn"] is tf.compat.v1.nn.static_rnn
    assert namespace["LSTMBlockCell"] is tf.compat.v1.nn.rnn_cell.LSTMCell
    assert namespace["LayerNormBasicLSTMCell"] is rnn_cells.LayerNormBasicLSTMCell
    assert "relu" not in namespace  # tf.nn is a place of the route, not what contrib.rnn exported
    framework = contrib.ContribModule("framework", contrib.ROUTES["framework"], tf)
    assert "arg_scope" in framework.__all__
    assert not {"range", "map", "print"} & set(framework.__all__)
