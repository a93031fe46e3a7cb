"""The TF1 mode's ``tf.contrib.mixed_precision`` (loss scaling as TensorFlow 1.15 did it), ``contrib.tfprof``,
``contrib.data``'s ``batch_and_drop_remainder`` and ``contrib.distributions`` (``percentile``, ``auto_correlation``
and ``MultivariateNormalDiag`` against NumPy):
values a script sees, step by step, and the paths zoo scripts use, run in the mode."""

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf1 import contrib_data, distributions, mixed_precision

RNG = np.random.RandomState(5)
v1 = tf.compat.v1


def _gradient_steps(manager, gradients, init=1.0):
    """Applies each gradient to a variable through LossScaleOptimizer; returns (x, loss scale, global step) after
    each step."""
    with tf.Graph().as_default():
        x = v1.Variable(init, name="x")
        step = v1.train.get_or_create_global_step()
        grad = v1.placeholder(tf.float32, [])
        opt = mixed_precision.LossScaleOptimizer(v1.train.GradientDescentOptimizer(1.0), manager())
        train = opt.apply_gradients([(grad, x)], global_step=step)
        scale = opt._loss_scale_manager.get_loss_scale()
        seen = []
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            for value in gradients:
                session.run(train, {grad: value})
                seen.append(tuple(float(v) for v in session.run([x, scale, step])))
        return seen


def test_a_step_with_a_non_finite_gradient_is_skipped_and_does_not_advance_the_global_step():
    seen = _gradient_steps(lambda: mixed_precision.FixedLossScaleManager(1e4), [np.nan, np.inf, 0.1])
    assert [x for x, _, _ in seen] == pytest.approx([1.0, 1.0, 0.9])
    assert [scale for _, scale, _ in seen] == [1e4, 1e4, 1e4]
    assert [step for _, _, step in seen] == [0, 0, 1]


def test_an_inf_gradient_halves_the_scale_and_finite_runs_double_it():
    def manager():
        return mixed_precision.ExponentialUpdateLossScaleManager(
            init_loss_scale=1024.0, incr_every_n_steps=2, decr_every_n_nan_or_inf=1, decr_ratio=0.5
        )

    seen = _gradient_steps(manager, [np.inf, 0.5, 0.25, np.inf, np.nan, 0.125])
    assert [scale for _, scale, _ in seen] == [512, 512, 1024, 512, 256, 256]
    assert [x for x, _, _ in seen] == [1.0, 0.5, 0.25, 0.25, 0.25, 0.125]
    assert [step for _, _, step in seen] == [0, 1, 2, 2, 2, 3]


def _manager_scales(finite_steps, **kwargs):
    with tf.Graph().as_default():
        manager = mixed_precision.ExponentialUpdateLossScaleManager(**kwargs)
        finite = v1.placeholder(tf.bool, [])
        update = manager.update_loss_scale(finite)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            scales = []
            for value in finite_steps:
                session.run(update, {finite: value})
                scales.append(float(session.run(manager.get_loss_scale())))
            counts = session.run([manager._num_good_steps, manager._num_bad_steps])
        return scales, [int(c) for c in counts]


def test_the_counts_of_good_and_bad_steps_decide_when_the_scale_changes():
    # a bad step resets the run of good ones; a good step does not forget the bad ones
    scales, counts = _manager_scales(
        [True, True, True, False, True, False, True],
        init_loss_scale=1.0,
        incr_every_n_steps=2,
        incr_ratio=2,
        decr_ratio=0.5,
    )
    assert scales == [1, 2, 2, 2, 2, 1, 1]
    assert counts == [1, 0]
    # the scale never goes below 1
    scales, _ = _manager_scales([False] * 8, init_loss_scale=4.0, incr_every_n_steps=2, decr_every_n_nan_or_inf=1)
    assert scales == pytest.approx([3.2, 2.56, 2.048, 1.6384, 1.31072, 1.048576, 1.0, 1.0])
    scales, _ = _manager_scales([False] * 4, init_loss_scale=2.0, incr_every_n_steps=2, decr_every_n_nan_or_inf=2)
    assert scales == pytest.approx([2, 1.6, 1.6, 1.28])


def test_the_scale_grows_while_the_product_stays_finite():
    largest = float(np.finfo(np.float32).max)
    init = largest / 4 + 10
    scales, _ = _manager_scales([True] * 6, init_loss_scale=init, incr_every_n_steps=2)
    assert scales == pytest.approx([init, init * 2, init * 2, largest, largest, largest])


def test_compute_gradients_scales_the_loss_so_float16_gradients_do_not_underflow():
    def step(wrap):
        with tf.Graph().as_default():
            x = v1.Variable(1.0)
            loss = tf.cast(x, tf.float16) * tf.constant(1e4, tf.float16) * tf.constant(1e-4, tf.float16)
            loss = loss * tf.constant(1e-4, tf.float16)
            opt = wrap(v1.train.GradientDescentOptimizer(1.0))
            grads = opt.compute_gradients(loss, var_list=[x])
            train = opt.minimize(loss, var_list=[x])
            with v1.Session() as session:
                session.run(v1.global_variables_initializer())
                grad = session.run(grads[0][0])
                session.run(train)
                return float(grad), float(session.run(x))

    assert step(lambda opt: opt) == (0.0, 1.0)  # c2 * c3 underflows in float16
    grad, x = step(lambda opt: mixed_precision.LossScaleOptimizer(opt, mixed_precision.FixedLossScaleManager(1e4)))
    assert grad == pytest.approx(1e-4, rel=1e-3)
    assert x == pytest.approx(1 - 1e-4, abs=1e-6)


def test_managers_refuse_a_scale_below_one_and_the_interface_is_abstract():
    with pytest.raises(NpuArgumentError, match="loss scale must be at least 1"):
        mixed_precision.FixedLossScaleManager(0.5)
    with pytest.raises(ValueError):
        mixed_precision.FixedLossScaleManager(0)
    with pytest.raises(TypeError):
        mixed_precision.LossScaleManager()


# ---------------------------------------------------------------- contrib.data


def test_batch_and_drop_remainder_drops_the_short_batch_and_knows_the_batch_size():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.range(10).apply(contrib_data.batch_and_drop_remainder(4))
        assert v1.data.get_output_shapes(dataset).as_list() == [4]
        padded = (
            tf.data.Dataset.range(1, 6)
            .map(lambda n: tf.fill([n], n))
            .apply(contrib_data.padded_batch_and_drop_remainder(2, [None], padding_values=tf.constant(-1, tf.int64)))
        )
        batches, rows = v1.data.make_one_shot_iterator(dataset).get_next(), v1.data.make_one_shot_iterator(padded)
        rows = rows.get_next()
        with v1.Session() as session:
            assert session.run(batches).tolist() == [0, 1, 2, 3]
            assert session.run(batches).tolist() == [4, 5, 6, 7]
            with pytest.raises(tf.errors.OutOfRangeError):
                session.run(batches)
            assert session.run(rows).tolist() == [[1, -1], [2, 2]]
            assert session.run(rows).tolist() == [[3, 3, 3, -1], [4, 4, 4, 4]]
            with pytest.raises(tf.errors.OutOfRangeError):
                session.run(rows)


# ---------------------------------------------------------------- contrib.distributions.auto_correlation


def _brute_force_auto_correlation(x, axis, max_lags, center, normalize):
    """R[m]: the mean of x[n] * conj(x[n + m]) over the N - m pairs, lag by lag."""
    length = x.shape[axis]
    lags = length if max_lags is None else min(length, max_lags + 1)
    if center:
        x = x - x.mean(axis=axis, keepdims=True)
    columns = [
        (np.take(x, range(length - m), axis=axis) * np.conj(np.take(x, range(m, length), axis=axis))).mean(
            axis=axis, keepdims=True
        )
        for m in range(lags)
    ]
    result = np.concatenate(columns, axis=axis)
    return result / np.take(result, [0], axis=axis) if normalize else result


def _auto_correlation(x, static_shape=True, **kwargs):
    with tf.Graph().as_default():
        placeholder = v1.placeholder_with_default(x, shape=x.shape if static_shape else None)
        result = distributions.auto_correlation(placeholder, **kwargs)
        with v1.Session() as session:
            return session.run(result), result.shape.as_list() if result.shape.ndims is not None else None


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize(
    "axis, max_lags, center, normalize",
    [
        (-1, None, False, False),
        (-2, None, False, True),
        (0, None, True, False),
        (2, 1, True, False),
        (2, 100, True, True),
    ],
)
def test_auto_correlation_matches_the_brute_force_sum_lag_by_lag(dtype, axis, max_lags, center, normalize):
    x = RNG.randn(3, 4, 5).astype(dtype)
    if dtype == np.complex64:
        x = x + 1j * RNG.randn(3, 4, 5).astype(dtype)
    expected = _brute_force_auto_correlation(x, axis, max_lags, center, normalize)
    for static_shape in (True, False):
        got, shape = _auto_correlation(
            x, static_shape, axis=axis, max_lags=max_lags, center=center, normalize=normalize
        )
        assert got.dtype == dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        assert shape == (list(expected.shape) if static_shape else None)


def test_auto_correlation_of_a_constant_sequence_and_of_white_noise():
    ones = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]], np.float32)
    got, _ = _auto_correlation(ones, axis=1, center=False, normalize=False)
    assert got.tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    got, _ = _auto_correlation(ones, axis=1, center=True, normalize=False)
    assert got.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    noise = 3.0 * RNG.randn(10000).astype(np.float32)
    got, shape = _auto_correlation(noise, max_lags=5000)
    assert shape == [5001] and got[0] == pytest.approx(1.0)  # normalized by default: R[0] is 1, not E[x^2] = 9
    assert np.abs(got[1:]).mean() < 0.02


def test_auto_correlation_refuses_bad_arguments_naming_them():
    with tf.Graph().as_default():
        with pytest.raises(NpuArgumentError, match="x must be floating or complex, got int32"):
            distributions.auto_correlation(np.arange(4, dtype=np.int32))
        with pytest.raises(NpuArgumentError, match="axis 2 is out of range for x of rank 2"):
            distributions.auto_correlation(np.ones((2, 2)), axis=2)
        with pytest.raises(NpuArgumentError, match="axis must be an int, got 0.5"):
            distributions.auto_correlation(np.ones((2, 2)), axis=0.5)
        with pytest.raises(NpuArgumentError, match="max_lags must be an int >= 0, an int tensor or None, got -1"):
            distributions.auto_correlation(np.ones((2, 2)), max_lags=-1)


# ---------------------------------------------------------------- contrib.distributions.percentile


def _percentile(*args, **kwargs):
    with tf.Graph().as_default():
        result = distributions.percentile(*args, **kwargs)
        static_shape = result.shape.as_list()
        with v1.Session() as session:
            return session.run(result), static_shape


@pytest.mark.parametrize("interpolation", ["lower", "higher"])
@pytest.mark.parametrize("q", [0.0, 17.0, 50.0, 63.5, 100.0])
def test_percentile_lower_and_higher_match_numpy(interpolation, q):
    x = RNG.randn(4, 7, 6)
    for axis in (None, 0, [1], [0, 2], -1):
        got, _ = _percentile(x, q, axis=axis, interpolation=interpolation)
        axes = tuple(np.atleast_1d(axis)) if axis is not None else None
        np.testing.assert_array_equal(got, np.percentile(x, q, axis=axes, method=interpolation))


def test_percentile_nearest_matches_numpy_away_from_ties_and_rounds_from_the_top_at_ties():
    x = RNG.randn(9, 5)
    for q in (0.0, 30.0, 80.0, 100.0):  # (9 - 1) * q / 100 is never half-way between two ranks
        got, shape = _percentile(x, q, axis=0)
        np.testing.assert_array_equal(got, np.percentile(x, q, axis=0, method="nearest"))
        assert shape == [5]
    assert _percentile([1.0, 2.0, 3.0, 4.0], 30.0)[0] == 2.0  # the default is "nearest"
    # half-way: TensorFlow 1.15 rounds the rank counted from the maximum half to even (NumPy gives 3.0)
    assert _percentile([1.0, 2.0, 3.0, 4.0], 50.0)[0] == 2.0
    assert _percentile([1.0, 2.0, 3.0, 4.0], 30.0, interpolation="lower")[0] == 1.0


def test_percentile_keep_dims_keeps_the_reduced_axes_with_size_one():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    got, shape = _percentile(x, 100.0, axis=[0, 2], keep_dims=True)
    assert shape == [1, 3, 1] and got.ravel().tolist() == [15, 19, 23]
    got, _ = _percentile(x, 0.0, keep_dims=True)
    assert got.shape == (1, 1, 1) and got.item() == 0


def test_percentile_refuses_bad_arguments_naming_them():
    with pytest.raises(NpuArgumentError, match="interpolation"):
        distributions.percentile([1.0], 50.0, interpolation="linear")
    with tf.Graph().as_default():
        with pytest.raises(NpuArgumentError, match="'q' to have ndims == 0"):
            distributions.percentile([1.0, 2.0], [50.0])
        with pytest.raises(NpuArgumentError, match="axis 2 is out of range"):
            distributions.percentile(np.ones((2, 2)), 50.0, axis=2)


# ---------------------------------------------------------------- contrib.distributions.MultivariateNormalDiag


def _normal_log_pdf(x, loc, scale):
    return (-0.5 * ((x - loc) / scale) ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi)).sum(-1)


def test_multivariate_normal_diag_matches_independent_normals():
    loc = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0]], np.float32)
    scale = np.array([1.5, 0.5, 2.0], np.float32)
    x = np.array([1.0, 0.0, 1.0], np.float32)
    with tf.Graph().as_default():
        mvn = distributions.MultivariateNormalDiag(loc=loc, scale_diag=scale)
        wide = distributions.MultivariateNormalDiag(loc=[0.0, 0.0, 0.0], scale_identity_multiplier=2.0)
        samples = mvn.sample(20000, seed=3)
        assert mvn.batch_shape.as_list() == [2] and mvn.event_shape.as_list() == [3]
        assert samples.shape.as_list() == [20000, 2, 3]
        fetches = [mvn.log_prob(x), wide.log_prob(x), mvn.entropy(), mvn.covariance(), samples]
        fetches += [v1.distributions.kl_divergence(mvn, wide), wide.stddev()]
        # TF 1.15's moments are the scale's: a batch of loc alone leaves them unbatched
        assert mvn.covariance().shape.as_list() == [3, 3] and mvn.variance().shape.as_list() == [3]
        unit = distributions.MultivariateNormalDiag(loc=loc)
        assert unit.stddev().shape.as_list() == [3] and unit.mean().shape.as_list() == [2, 3]
        with v1.Session() as session:
            log_prob, wide_log_prob, entropy, covariance, drawn, kl, wide_stddev = session.run(fetches)
    np.testing.assert_allclose(log_prob, _normal_log_pdf(x, loc, scale), rtol=1e-5)
    np.testing.assert_allclose(wide_log_prob, _normal_log_pdf(x, 0.0, 2.0), rtol=1e-5)
    np.testing.assert_allclose(entropy, [np.log(2 * np.pi * np.e * scale**2).sum() / 2] * 2, rtol=1e-5)
    np.testing.assert_allclose(covariance, np.diag(scale**2))
    np.testing.assert_allclose(wide_stddev, [2.0, 2.0, 2.0])
    kl_expected = (np.log(2.0 / scale) + (scale**2 + loc**2) / 8.0 - 0.5).sum(-1)
    np.testing.assert_allclose(kl, kl_expected, rtol=1e-5)
    np.testing.assert_allclose(drawn.mean(0), loc, atol=0.05)
    np.testing.assert_allclose(drawn.std(0), np.broadcast_to(scale, (2, 3)), rtol=0.03)
    with pytest.raises(NpuArgumentError, match="loc or scale_diag"):
        distributions.MultivariateNormalDiag()


def test_multivariate_normal_diag_needs_an_event_dimension_and_names_a_singular_scale():
    with tf.Graph().as_default():
        with pytest.raises(NpuArgumentError, match="loc must have at least 1 dimension"):
            distributions.MultivariateNormalDiag(loc=0.25, scale_diag=[2.0])
        with pytest.raises(NpuArgumentError, match="scale_diag must have at least 1 dimension"):
            distributions.MultivariateNormalDiag(loc=[0.25, 1.0], scale_diag=3.0)
        checked = distributions.MultivariateNormalDiag(loc=[0.25, 1.0], scale_diag=[3.0, 0.0], validate_args=True)
        with v1.Session() as session:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Singular operator"):
                session.run(checked.sample(seed=1))


# ---------------------------------------------------------------- the names, run in the mode

SCRIPT = r"""
import json
import os
import numpy as np
import tensorflow as tf
from tensorflow.contrib.mixed_precision.python import loss_scale_optimizer
from tensorflow.contrib.distributions.python.ops import sample_stats

mp = tf.contrib.mixed_precision
w = tf.get_variable("w", shape=[3, 4], initializer=tf.ones_initializer())
b = tf.get_variable("b", shape=[4], initializer=tf.zeros_initializer())
y = tf.matmul(tf.ones([2, 3]), w) + b
ma = tf.contrib.tfprof.model_analyzer
stats = ma.print_model_analysis(tf.get_default_graph(), tfprof_options=ma.TRAINABLE_VARS_PARAMS_STAT_OPTIONS)
flops = ma.print_model_analysis(tf.get_default_graph(), tfprof_options=ma.FLOAT_OPS_OPTIONS)
loss = tf.reduce_sum(y * y)
manager = mp.ExponentialUpdateLossScaleManager(init_loss_scale=2.0 ** 15, incr_every_n_steps=1000, decr_ratio=0.5)
opt = loss_scale_optimizer.LossScaleOptimizer(tf.train.AdamOptimizer(1e-3), manager)
train = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())
batch = tf.data.Dataset.range(5).apply(tf.contrib.data.batch_and_drop_remainder(2))
ds = tf.contrib.distributions
p = ds.Categorical(probs=[0.5, 0.5])
q = ds.Categorical(probs=[0.25, 0.75])
kl = ds.kl_divergence(p, q)
normal = ds.Normal(loc=0.0, scale=1.0).prob(0.0)
pct = sample_stats.percentile(tf.constant([3.0, 1.0, 2.0]), q=50.0)
with tf.contrib.tfprof.ProfileContext("profiles", trace_steps=[1, 2], dump_steps=[2]) as context:
    context.add_auto_profiling("op", tf.profiler.ProfileOptionBuilder.time_and_memory(), [2])
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        for _ in range(3):
            session.run(train)
        values = session.run({"kl": kl, "normal": normal, "pct": pct, "scale": manager.get_loss_scale()})
with tf.contrib.tfprof.ProfileContext("unused", enabled=False):
    pass
values.update(
    kl=round(float(values["kl"]), 6), normal=round(float(values["normal"]), 6), pct=float(values["pct"]),
    scale=float(values["scale"]), params=stats.total_parameters, flops=flops.total_float_ops,
    dumped=sorted(os.listdir("profiles")), profiled=sorted(context.get_profiles("op")),
    unused=os.path.exists("unused"), batch=tf.compat.v1.data.get_output_shapes(batch).as_list(),
)
print("RESULT " + json.dumps(values, sort_keys=True))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_zoo_names_of_these_modules_work_in_the_tf1_mode(tmp_path):
    assert helpers.tf1.run_tf1_script(tmp_path, SCRIPT, timeout=280) == {
        "kl": round(0.5 * np.log(0.5 / 0.25) + 0.5 * np.log(0.5 / 0.75), 6),
        "normal": round(1 / np.sqrt(2 * np.pi), 6),
        "pct": 2.0,
        "scale": 2.0**15,
        "batch": [2],
        "params": 16,
        "flops": 2 * 2 * 3 * 4 + 2 * 4,
        "dumped": ["profile_2"],
        "profiled": [2],
        "unused": False,
    }
