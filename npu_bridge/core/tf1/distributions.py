"""``percentile``, ``auto_correlation`` and ``MultivariateNormalDiag`` of TensorFlow 1.15's
``tf.contrib.distributions``, written on TensorFlow 2.21's ops.

The other distributions the zoo uses (``Normal``, ``Categorical``, ``Bernoulli``, ``Beta``, ``kl_divergence``, ...)
are TensorFlow's ``tf.compat.v1.distributions``, which 1.15's contrib re-exported; the rest of contrib.distributions
lived on in TensorFlow Probability, which npu_bridge does not install.
"""

import math

import numpy as np
import tensorflow as tf
from tensorflow.python.ops.distributions import distribution

from npu_bridge.core.runtime.errors import NpuArgumentError

__all__ = ["MultivariateNormalDiag", "auto_correlation", "percentile"]

_INTERPOLATIONS = ("lower", "higher", "nearest")


def percentile(x, q, axis=None, interpolation=None, keep_dims=False, validate_args=False, name=None):
    """The ``q``-th percentile of ``x``: the value ``q / 100`` of the way from the minimum to the maximum.

    Between two data points ``i < j`` the result is ``i`` ("lower"), ``j`` ("higher") or the nearer of the two
    ("nearest", the default). "nearest" rounds half to even the rank counted from the maximum, as TensorFlow 1.15
    did (NumPy counts from the minimum, so the two can pick different neighbours at an exact tie).

    Args:
      x: floating or integer tensor with at least one dimension.
      q: scalar in [0, 100].
      axis: None (every element is a sample: a scalar result) or a constant int or list of ints, the dimensions
        holding the samples; then ``x`` must have a known rank.
      interpolation: "lower", "higher", "nearest" or None ("nearest").
      keep_dims: keep the reduced dimensions with size 1.
      validate_args: add run-time checks that ``q`` is a scalar in [0, 100].
      name: name scope (default "percentile").
    Returns:
      A tensor of ``x``'s dtype: ``x``'s shape without the ``axis`` dimensions (all of them when ``axis`` is None).
    Raises:
      ValueError: ``interpolation`` is not allowed, ``q`` is not a scalar, ``axis`` is not a constant of at most
        one dimension or names a dimension ``x`` lacks, or ``x``'s rank is unknown with ``axis`` given.
    """
    if interpolation is None:
        interpolation = "nearest"
    elif interpolation not in _INTERPOLATIONS:
        raise NpuArgumentError(f"Argument 'interpolation' must be in {set(_INTERPOLATIONS)}.  Found {interpolation}")
    with tf.compat.v1.name_scope(name, "percentile", [x, q]):
        x = tf.convert_to_tensor(x, name="x")
        q = tf.cast(q, tf.float64, name="q")
        if q.shape.ndims not in (None, 0):
            raise NpuArgumentError(f"Expected argument 'q' to have ndims == 0 (a scalar), found shape {q.shape}")
        if validate_args:
            checks = [
                tf.compat.v1.assert_rank(q, 0),
                tf.compat.v1.assert_greater_equal(q, tf.constant(0.0, tf.float64)),
                tf.compat.v1.assert_less_equal(q, tf.constant(100.0, tf.float64)),
            ]
            with tf.control_dependencies(checks):
                q = tf.identity(q)
        axes = None if axis is None else _static_axes(axis, x)
        y = tf.reshape(x, [-1]) if axes is None else _samples_last(x, axes)

        count = tf.shape(y)[-1]
        from_top = (tf.cast(count, tf.float64) - 1.0) * (1.0 - q / 100.0)
        rounding = {"lower": tf.math.ceil, "higher": tf.math.floor, "nearest": tf.math.round}[interpolation]
        index = tf.clip_by_value(tf.cast(rounding(from_top), tf.int32), 0, count - 1)
        descending = tf.math.top_k(y, k=count, sorted=True).values
        result = tf.gather(descending, index, axis=-1)
        result.set_shape(y.shape[:-1])
        if keep_dims:
            if axes is None:
                result = tf.reshape(result, tf.ones([tf.rank(x)], tf.int32))
            else:
                for dim in sorted(axes):
                    result = tf.expand_dims(result, dim)
        return result


def auto_correlation(x, axis=-1, max_lags=None, center=True, normalize=True, name="auto_correlation"):
    """The auto-correlation of ``x`` along ``axis``: ``R[m]``, the mean of ``x[n] * conj(x[n + m])`` over the
    ``N - m`` pairs the dimension holds, for lags ``m = 0 .. max_lags``.

    Computed through an FFT of ``x`` zero-padded to a power of two at least ``2 N``, so there is no wrap-around.

    Args:
      x: floating or complex tensor.
      axis: int, the dimension holding the sequence (negative counts from the end).
      max_lags: int >= 0, int tensor or None: the largest lag (None, or more than ``N - 1``: ``N - 1``).
      center: subtract the mean along ``axis`` first.
      normalize: divide by ``R[0]`` (then ``R[0]`` is 1).
      name: name scope.
    Returns:
      A tensor of ``x``'s dtype and shape, but ``min(max_lags, N - 1) + 1`` long along ``axis``.
    Raises:
      NpuArgumentError: ``x`` is neither floating nor complex, ``axis`` is not an int or is out of range for a
        known rank, or ``max_lags`` is negative.
    """
    with tf.compat.v1.name_scope(name, "auto_correlation", [x]):
        x = tf.convert_to_tensor(x, name="x")
        if not (x.dtype.is_floating or x.dtype.is_complex):
            raise NpuArgumentError(f"auto_correlation: x must be floating or complex, got {x.dtype.name}")
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise NpuArgumentError(f"auto_correlation: axis must be an int, got {axis!r}")
        static_lags = None if max_lags is None or tf.is_tensor(max_lags) else max_lags
        if static_lags is not None and (
            isinstance(static_lags, bool) or not isinstance(static_lags, (int, np.integer)) or static_lags < 0
        ):
            raise NpuArgumentError(
                f"auto_correlation: max_lags must be an int >= 0, an int tensor or None, got {max_lags!r}"
            )
        ndims = x.shape.ndims
        if ndims is not None and not -ndims <= axis < ndims:
            raise NpuArgumentError(f"auto_correlation: axis {axis} is out of range for x of rank {ndims}")
        rank = tf.rank(x)
        last = tf.math.floormod(axis, rank)
        perm = tf.concat([tf.range(last), tf.range(last + 1, rank), [last]], axis=0)
        sequences = tf.transpose(x, perm)
        if center:
            sequences -= tf.reduce_mean(sequences, axis=-1, keepdims=True)

        length = tf.shape(sequences)[-1]
        padded_length = tf.cast(
            2.0 ** tf.math.ceil(tf.math.log(tf.cast(2 * length, tf.float64)) / math.log(2.0)), tf.int32
        )
        complex_dtype = tf.complex128 if x.dtype in (tf.float64, tf.complex128) else tf.complex64
        padding = tf.concat([tf.zeros([rank - 1, 2], tf.int32), [[0, padded_length - length]]], axis=0)
        spectrum = tf.signal.fft(tf.pad(tf.cast(sequences, complex_dtype), padding))
        # ifft(|X|^2)[m] is the sum of x[n + m] conj(x[n]); R[m] pairs them the other way round
        sums = tf.math.conj(tf.signal.ifft(spectrum * tf.math.conj(spectrum)))
        sums = sums if x.dtype.is_complex else tf.math.real(sums)

        lags = length if max_lags is None else tf.minimum(length, max_lags + 1)
        pair_counts = tf.cast(length - tf.range(lags), sums.dtype)
        correlation = tf.cast(sums[..., :lags] / pair_counts, x.dtype)
        if normalize:
            correlation /= correlation[..., :1]
        result = tf.transpose(correlation, tf.math.invert_permutation(perm))
        if ndims is not None:
            shape = x.shape.as_list()
            if tf.is_tensor(max_lags):
                shape[axis] = None
            elif max_lags is not None and shape[axis] is not None:
                shape[axis] = min(shape[axis], max_lags + 1)
            result.set_shape(shape)
        return result


def _static_axes(axis, x):
    axis = tf.convert_to_tensor(axis, name="axis")
    if not axis.dtype.is_integer:
        raise NpuArgumentError(f"axis must be of an integer dtype, got {axis.dtype.name}")
    value = tf.get_static_value(axis)
    if value is None:
        raise NpuArgumentError(f"Expected argument 'axis' to be statically available.  Found: {axis}")
    if np.ndim(value) > 1:
        raise NpuArgumentError(f"axis must have at most one dimension, got {np.ndim(value)}")
    ndims = x.shape.ndims
    if ndims is None or ndims < 1:
        raise NpuArgumentError(f"x must have a known rank of at least 1 when axis is given, got {x.shape}")
    axes = []
    for dim in np.atleast_1d(value).tolist():
        if not -ndims <= dim < ndims:
            raise NpuArgumentError(f"axis {dim} is out of range for x of rank {ndims}")
        axes.append(dim + ndims if dim < 0 else dim)
    return axes


def _samples_last(x, axes):
    """``x`` transposed so the ``axes`` dimensions come last, and those merged into one."""
    ndims = x.shape.ndims
    kept = [dim for dim in range(ndims) if dim not in axes]
    moved = tf.transpose(x, kept + axes)
    if not kept:
        return tf.reshape(moved, [-1])
    static = [tf.compat.dimension_value(size) for size in moved.shape[: len(kept)]]
    outer = [size if size is not None else tf.shape(moved)[i] for i, size in enumerate(static)]
    return tf.reshape(moved, outer + [-1])


def _check_has_event_dimension(what, tensor):
    if tensor is not None and tensor.shape.ndims == 0:
        raise NpuArgumentError(
            f"MultivariateNormalDiag: {what} must have at least 1 dimension (the event dimension), got a scalar"
        )


class MultivariateNormalDiag(distribution.Distribution):
    """The multivariate normal distribution with mean ``loc`` and covariance ``scale @ scale.T``, ``scale`` diagonal.

    ``scale`` is ``diag(scale_diag + scale_identity_multiplier)``: ``scale_diag`` alone, the multiplier times the
    identity alone, the identity when both are None. Its event shape is the last dimension of ``loc`` (or of
    ``scale_diag``); its batch shape the other dimensions, broadcast. ``sample`` is reparameterized
    (``loc + scale * N(0, 1)``); ``kl_divergence`` of two of them is registered.

    Args:
      loc: floating tensor ``[..., k]``, the means (None: zeros).
      scale_diag: floating tensor ``[..., k]``, the diagonal of ``scale`` (None: none).
      scale_identity_multiplier: floating tensor ``[...]`` added to the diagonal (None: none).
      validate_args: add run-time checks that the diagonal has no zero.
      allow_nan_stats: as for every ``tf.compat.v1.distributions.Distribution``.
      name: name scope.
    Raises:
      ValueError: ``loc`` and ``scale_diag`` are both None, or one of them is a scalar (no event dimension).
    """

    def __init__(
        self,
        loc=None,
        scale_diag=None,
        scale_identity_multiplier=None,
        validate_args=False,
        allow_nan_stats=True,
        name="MultivariateNormalDiag",
    ):
        parameters = dict(locals())
        if loc is None and scale_diag is None:
            raise NpuArgumentError("MultivariateNormalDiag needs loc or scale_diag (both are None)")
        with tf.compat.v1.name_scope(name, values=[loc, scale_diag, scale_identity_multiplier]) as name:
            given = [t for t in (loc, scale_diag, scale_identity_multiplier) if t is not None]
            dtype = next((t.dtype for t in given if isinstance(t, tf.Tensor)), None)
            loc = None if loc is None else tf.convert_to_tensor(loc, dtype=dtype, name="loc")
            dtype = dtype or (loc.dtype if loc is not None else None)
            _check_has_event_dimension("loc", loc)
            if scale_diag is not None:
                diag = tf.convert_to_tensor(scale_diag, dtype=dtype, name="scale_diag")
                _check_has_event_dimension("scale_diag", diag)
                if scale_identity_multiplier is not None:
                    diag += tf.convert_to_tensor(scale_identity_multiplier, dtype=diag.dtype)[..., tf.newaxis]
            elif scale_identity_multiplier is not None:  # a scaled identity: batched as the multiplier only
                multiplier = tf.convert_to_tensor(scale_identity_multiplier, dtype=loc.dtype)
                diag = multiplier[..., tf.newaxis] * tf.ones(tf.shape(loc)[-1:], loc.dtype)
            else:  # the identity, unbatched
                diag = tf.ones(tf.shape(loc)[-1:], loc.dtype)
            if loc is None:
                loc = tf.zeros_like(diag)
            if validate_args:
                # checked when run, as TF 1.15 did (assert_none_equal would raise here for a constant diagonal)
                nonzero = tf.debugging.Assert(
                    tf.reduce_all(tf.not_equal(diag, tf.zeros([], diag.dtype))),
                    ["Singular operator: scale_diag has a zero:", diag],
                )
                with tf.control_dependencies([nonzero]):
                    diag = tf.identity(diag)
            self._loc = tf.identity(loc, name="loc")
            self._diag = tf.identity(diag, name="scale_diag")
        super().__init__(
            dtype=self._loc.dtype,
            reparameterization_type=distribution.FULLY_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._loc, self._diag],
            name=name,
        )

    @property
    def loc(self):
        """The means."""
        return self._loc

    @property
    def scale(self):
        """``scale`` as a ``tf.linalg.LinearOperatorDiag``."""
        return tf.linalg.LinearOperatorDiag(self._diag, is_non_singular=True)

    def _batch_shape_tensor(self):
        return tf.broadcast_dynamic_shape(tf.shape(self._loc)[:-1], tf.shape(self._diag)[:-1])

    def _batch_shape(self):
        return tf.broadcast_static_shape(self._loc.shape[:-1], self._diag.shape[:-1])

    def _event_shape_tensor(self):
        return tf.broadcast_dynamic_shape(tf.shape(self._loc)[-1:], tf.shape(self._diag)[-1:])

    def _event_shape(self):
        return tf.broadcast_static_shape(self._loc.shape[-1:], self._diag.shape[-1:])

    def _event_size(self):
        return tf.cast(self._event_shape_tensor()[0], self.dtype)

    def _sample_n(self, n, seed=None):
        shape = tf.concat([[n], self._batch_shape_tensor(), self._event_shape_tensor()], axis=0)
        return self._loc + self._diag * tf.random.normal(shape, dtype=self.dtype, seed=seed)

    def _log_prob(self, x):
        z = (x - self._loc) / self._diag
        return (
            -0.5 * tf.reduce_sum(tf.square(z), axis=-1)
            - 0.5 * self._event_size() * math.log(2 * math.pi)
            - tf.reduce_sum(tf.math.log(tf.abs(self._diag)), axis=-1)
        )

    def _broadcast(self, value):
        return value + tf.zeros_like(self._loc) + tf.zeros_like(self._diag)

    def _entropy(self):
        log_det = tf.reduce_sum(tf.math.log(tf.abs(self._broadcast(self._diag))), axis=-1)
        return 0.5 * self._event_size() * (1.0 + math.log(2 * math.pi)) + log_det

    def _mean(self):
        return self._broadcast(self._loc)

    def _mode(self):
        return self._mean()

    def _stddev(self):  # the scale's alone, as TF 1.15's: not broadcast to a batch of loc
        return tf.abs(self._diag)

    def _variance(self):
        return tf.square(self._stddev())

    def _covariance(self):
        return tf.linalg.diag(self._variance())


@tf.compat.v1.distributions.RegisterKL(MultivariateNormalDiag, MultivariateNormalDiag)
def _kl_mvn_diag(a, b, name=None):
    """KL(a || b) of two diagonal multivariate normals."""
    with tf.compat.v1.name_scope(name, "kl_mvn_diag", [a.loc, b.loc]):
        ratio = a._diag / b._diag
        z = (b._loc - a._loc) / b._diag
        return 0.5 * tf.reduce_sum(tf.square(ratio) + tf.square(z) - 1.0 - 2.0 * tf.math.log(tf.abs(ratio)), axis=-1)
