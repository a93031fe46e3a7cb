"""The TF1 mode's ``tf.contrib.nn``, ``contrib.image``'s ``distort_image_ops``, ``contrib.framework``'s audio ops
and variables, TensorFlow 1.15's ``threadpool`` and ``tensorflow.python.estimator`` paths: values against NumPy
references written here, errors naming their argument, and the import paths zoo scripts use, run in the mode."""

import math

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1 import contrib_nn, distort_image_ops, threadpool

RNG = np.random.RandomState(11)
v1 = tf.compat.v1


def run(fetches, feed=None):
    with v1.Session() as session:
        return session.run(fetches, feed)


# ---------------------------------------------------------------- threadpool


def test_override_threadpool_sets_the_private_pool_options_and_keeps_the_values():
    with tf.Graph().as_default():
        dataset = v1.data.Dataset.range(6).map(lambda x: x * 3, num_parallel_calls=2)
        pool = threadpool.PrivateThreadPool(3, display_name="input_pool", max_intra_op_parallelism=2)
        pooled = threadpool.override_threadpool(dataset, pool)
        assert pooled.options().threading.private_threadpool_size == 3
        assert pooled.options().threading.max_intra_op_parallelism == 2
        following = v1.data.make_one_shot_iterator(pooled).get_next()
        with v1.Session() as session:
            assert [session.run(following) for _ in range(6)] == [0, 3, 6, 9, 12, 15]


def test_threadpool_refuses_bad_arguments_naming_them():
    with pytest.raises(NpuArgumentError, match="num_threads must be an int >= 1, given 0"):
        threadpool.PrivateThreadPool(0)
    with pytest.raises(NpuArgumentTypeError, match="num_threads must be an int >= 1, given 2.5"):
        threadpool.PrivateThreadPool(2.5)
    with pytest.raises(NpuArgumentError, match="max_intra_op_parallelism"):
        threadpool.PrivateThreadPool(2, max_intra_op_parallelism=-1)
    dataset = tf.data.Dataset.range(2)
    with pytest.raises(NpuArgumentTypeError, match="thread_pool must be a PrivateThreadPool, given 4"):
        threadpool.override_threadpool(dataset, 4)
    with pytest.raises(NpuArgumentTypeError, match="dataset must be a tf.data.Dataset"):
        threadpool.override_threadpool([1, 2], threadpool.PrivateThreadPool(1))


# ---------------------------------------------------------------- contrib.nn


def test_alpha_dropout_maps_kept_and_dropped_units_affinely_and_keeps_mean_and_variance():
    keep = 0.8
    alpha = -1.7580993408473766
    a = (keep + keep * (1 - keep) * alpha**2) ** -0.5
    b = -a * alpha * (1 - keep)
    x = RNG.randn(400, 250).astype(np.float32)
    with tf.Graph().as_default():
        out = run(contrib_nn.alpha_dropout(tf.constant(x), keep, seed=3))
    kept = np.isclose(out, a * x + b, atol=1e-5)
    dropped = np.isclose(out, a * alpha + b, atol=1e-5)
    assert np.all(kept | dropped)
    assert abs(kept.mean() - keep) < 0.01
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02


def test_alpha_dropout_with_keep_prob_one_is_the_input_and_refuses_other_numbers():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        assert contrib_nn.alpha_dropout(x, 1.0) is x
        with pytest.raises(NpuArgumentError, match=r"keep_prob must be in \(0, 1\], given 1.5"):
            contrib_nn.alpha_dropout(x, 1.5)
        with pytest.raises(NpuArgumentError, match="given 0"):
            contrib_nn.alpha_dropout(x, 0)


def np_conv1d_transpose(x, filters, length, stride):
    """x [n, w, c_in]; filters [k, c_out, c_in]; SAME padding: the gradient of a strided conv1d."""
    n, w, _ = x.shape
    k, c_out, _ = filters.shape
    pad = max((w - 1) * stride + k - length, 0) // 2
    out = np.zeros((n, length + k + stride * w, c_out))
    for i in range(w):
        for t in range(k):
            position = i * stride + t - pad
            if 0 <= position < length:
                out[:, position] += x[:, i] @ filters[t].T
    return out[:, :length]


def test_conv1d_transpose_is_tensorflow_s_and_matches_numpy():
    x = RNG.randn(2, 5, 3).astype(np.float32)
    filters = RNG.randn(3, 4, 3).astype(np.float32)
    with tf.Graph().as_default():
        y = run(contrib_nn.conv1d_transpose(x, filters, [2, 10, 4], 2))
    np.testing.assert_allclose(y, np_conv1d_transpose(x, filters, 10, 2), rtol=1e-4, atol=1e-4)


def test_flipped_cross_entropies_take_logits_first():
    logits = RNG.randn(4, 5).astype(np.float32)
    labels = np.eye(5, dtype=np.float32)[[0, 3, 1, 4]]
    with tf.Graph().as_default():
        soft, sparse, sigmoid = run(
            [
                contrib_nn.deprecated_flipped_softmax_cross_entropy_with_logits(logits, labels),
                contrib_nn.deprecated_flipped_sparse_softmax_cross_entropy_with_logits(logits, [0, 3, 1, 4]),
                contrib_nn.deprecated_flipped_sigmoid_cross_entropy_with_logits(logits, labels),
            ]
        )
    log_softmax = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    expected = -(labels * log_softmax).sum(1)
    np.testing.assert_allclose(soft, expected, rtol=1e-5)
    np.testing.assert_allclose(sparse, expected, rtol=1e-5)
    np.testing.assert_allclose(
        sigmoid, np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-abs(logits))), rtol=1e-5
    )


def test_sampled_sparse_softmax_loss_matches_numpy_for_given_samples():
    weights = RNG.randn(6, 3).astype(np.float32)
    biases = RNG.randn(6).astype(np.float32)
    inputs = RNG.randn(2, 3).astype(np.float32)
    labels = np.array([[1], [4]], np.int64)
    sampled = np.array([0, 2, 5], np.int64)
    true_count, sampled_count = np.array([[0.5], [0.25]], np.float32), np.array([0.1, 0.2, 0.4], np.float32)
    with tf.Graph().as_default():
        loss = run(
            contrib_nn.sampled_sparse_softmax_loss(
                weights, biases, labels, inputs, 3, 6, sampled_values=(sampled, true_count, sampled_count)
            )
        )
    true_logits = (inputs * weights[labels[:, 0]]).sum(1) + biases[labels[:, 0]] - np.log(true_count[:, 0])
    sampled_logits = inputs @ weights[sampled].T + biases[sampled] - np.log(sampled_count)
    logits = np.concatenate([true_logits[:, None], sampled_logits], 1)
    expected = -logits[:, 0] + np.log(np.exp(logits).sum(1))
    np.testing.assert_allclose(loss, expected, rtol=1e-5)


def test_rank_sampled_softmax_loss_keeps_the_highest_ranked_samples_and_checks_its_counts():
    weights = RNG.randn(8, 3).astype(np.float32)
    biases = np.zeros(8, np.float32)
    inputs = RNG.randn(2, 3).astype(np.float32)
    labels = np.array([[1], [2]], np.int64)
    sampled = np.array([0, 3, 5, 7], np.int64)
    counts = (np.ones((2, 1), np.float32), np.ones(4, np.float32))
    rank = np.log(np.exp(weights[sampled] @ inputs.T).sum(1))  # temperature 1
    top = sampled[np.argsort(-rank)[:2]]
    with tf.Graph().as_default():
        loss = run(
            contrib_nn.rank_sampled_softmax_loss(
                weights, biases, labels, inputs, 4, 2, 8, 1, (sampled, *counts), 1.0, False, "div"
            )
        )
    logits = np.concatenate([(inputs * weights[labels[:, 0]]).sum(1)[:, None], inputs @ weights[top].T], 1)
    np.testing.assert_allclose(loss, -logits[:, 0] + np.log(np.exp(logits).sum(1)), rtol=1e-5)
    with pytest.raises(NpuArgumentError, match=r"num_resampled \(4\) must be less than num_sampled \(4\)"):
        contrib_nn.rank_sampled_softmax_loss(weights, biases, labels, inputs, 4, 4, 8, 1, None, 1.0, False, "div")
    with pytest.raises(NpuArgumentError, match=r"unsupported partition_strategy \(x\): .* must be 'div' or 'mod'"):
        contrib_nn.rank_sampled_softmax_loss(weights, biases, labels, inputs, 4, 2, 8, 1, None, 1.0, False, "x")


def test_scaled_softplus_matches_numpy_with_and_without_clip():
    x = np.linspace(-4, 4, 9).astype(np.float32)
    with tf.Graph().as_default():
        plain, clipped = run([contrib_nn.scaled_softplus(x, 0.5), contrib_nn.scaled_softplus(x, 0.5, clip=1.0)])
    expected = 0.5 * np.log1p(np.exp(x / 0.5))
    np.testing.assert_allclose(plain, expected, rtol=1e-5)
    np.testing.assert_allclose(clipped, np.minimum(expected, 1.0), rtol=1e-5)


# ---------------------------------------------------------------- distort_image_ops


def np_hsv_in_yiq(rgb, hue, saturation, value):
    yiq = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]])
    c, s = value * saturation * math.cos(hue), value * saturation * math.sin(hue)
    hsv = np.array([[value, 0, 0], [0, c, -s], [0, s, c]])
    return rgb @ (np.linalg.inv(yiq) @ hsv @ yiq).T


def test_adjust_hsv_in_yiq_rotates_hue_and_scales_in_yiq_space_like_numpy():
    images = RNG.rand(2, 4, 5, 3).astype(np.float32)
    with tf.Graph().as_default():
        out, same = run(
            [
                distort_image_ops.adjust_hsv_in_yiq(images, 0.7, 1.3, 0.8),
                distort_image_ops.adjust_hsv_in_yiq(images[0]),
            ]
        )
    np.testing.assert_allclose(out, np_hsv_in_yiq(images, 0.7, 1.3, 0.8), atol=2e-3)
    np.testing.assert_allclose(same, images[0], atol=2e-3)  # the inverse matrix has 8 digits


def test_adjust_hsv_in_yiq_keeps_uint8_and_scaling_the_value_by_zero_gives_black():
    images = (RNG.rand(3, 3, 3) * 255).astype(np.uint8)
    with tf.Graph().as_default():
        out, black = run(
            [
                distort_image_ops.adjust_hsv_in_yiq(images, 0.0, 0.0, 1.0),
                distort_image_ops.adjust_hsv_in_yiq(images, 1.0, 1.0, 0.0),
            ]
        )
    assert out.dtype == np.uint8 and black.dtype == np.uint8
    grey = images.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    assert np.all(np.abs(out.astype(np.float64) - grey[..., None]) <= 2)  # saturation 0: luminance only
    assert np.all(black == 0)


def test_random_hsv_in_yiq_draws_within_its_bounds_and_refuses_bad_ones():
    images = RNG.rand(6, 6, 3).astype(np.float32)
    with tf.Graph().as_default():
        out = run(distort_image_ops.random_hsv_in_yiq(images, 0.0, 0.5, 0.5, 2.0, 2.0))
        np.testing.assert_allclose(out, np_hsv_in_yiq(images, 0, 0.5, 2.0), atol=5e-3)
        with pytest.raises(NpuArgumentError, match="max_delta_hue must be a number >= 0, given -1"):
            distort_image_ops.random_hsv_in_yiq(images, max_delta_hue=-1)
        with pytest.raises(NpuArgumentError, match=r"lower_value \(2\) must be at most upper_value \(1\)"):
            distort_image_ops.random_hsv_in_yiq(images, lower_value=2, upper_value=1)
        with pytest.raises(NpuArgumentError, match="Shape must be at least rank 3: image must have rank >= 3"):
            distort_image_ops.adjust_hsv_in_yiq(np.zeros((4, 4), np.float32))
        with pytest.raises(NpuArgumentError, match="input must have 3 channels but instead has 5 channels"):
            distort_image_ops.adjust_hsv_in_yiq(np.zeros((2, 2, 5), np.float32))


# ---------------------------------------------------------------- the import paths, in the mode

SCRIPT = r"""
import json
import numpy as np
import tensorflow as tf
from tensorflow.python.data.experimental.ops import threadpool
from tensorflow.python.estimator import estimator
from tensorflow.python.estimator import run_config, training
from tensorflow.python.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorflow.python.estimator.export import export_output
from tensorflow.contrib.framework.python.ops import audio_ops as contrib_audio
from tensorflow.contrib.framework.python.ops.variables import model_variable
from tensorflow.contrib.image.python.ops import distort_image_ops
import tensorflow.contrib.framework.python.ops.variables as contrib_variables
from tensorflow.contrib.rnn.python.ops.gru_ops import GRUBlockCell
from tensorflow.contrib.rnn.python.ops import lstm_ops

dataset = threadpool.override_threadpool(
    tf.data.Dataset.range(4), threadpool.PrivateThreadPool(2, display_name="input_pipeline_thread_pool")
)
weights = model_variable("weights", shape=[2], initializer=tf.ones_initializer())
wav = contrib_audio.encode_wav(tf.constant([[0.5], [-0.25]]), 16000)
audio, rate = contrib_audio.decode_wav(wav)
spectrogram = contrib_audio.audio_spectrogram(tf.zeros([512, 1]), window_size=256, stride=128)
mfcc = contrib_audio.mfcc(spectrogram, 16000)
hsv = distort_image_ops.random_hsv_in_yiq(tf.zeros([2, 2, 3]), 0.1, 0.9, 1.1, 0.9, 1.1)
upsampled = tf.contrib.nn.conv1d_transpose(tf.ones([1, 4, 2]), tf.ones([3, 5, 2]), [1, 8, 5], 2)
with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    iterator = tf.data.make_one_shot_iterator(dataset).get_next()
    values = [int(session.run(iterator)) for _ in range(4)]
    audio_value, rate_value, mfcc_value, upsampled_value = session.run([audio, rate, mfcc, upsampled])
try:
    from tensorflow.python.estimator.canned import head
    canned = None
except ImportError as error:
    canned = error.name
print("RESULT " + json.dumps({
    "values": values,
    "estimator": estimator.Estimator is tf.estimator.Estimator and EstimatorSpec is tf.estimator.EstimatorSpec,
    "mode_keys": ModeKeys.TRAIN,
    "run_config": run_config.RunConfig is tf.estimator.RunConfig,
    "task_type": run_config.TaskType.EVALUATOR,
    "block_cells": [GRUBlockCell.__name__, lstm_ops.LSTMBlockCell.__name__],
    "train_and_evaluate": training.train_and_evaluate is tf.estimator.train_and_evaluate,
    "predict_output": export_output.PredictOutput.__name__,
    "global_step": int(estimator._load_global_step_from_checkpoint_dir("no-such-dir")),
    "model_variables": [v.op.name for v in contrib_variables.get_model_variables()],
    "audio": audio_value[:, 0].tolist(), "rate": int(rate_value), "mfcc_shape": list(mfcc_value.shape),
    "upsampled_shape": list(upsampled_value.shape),
    "canned": canned,
}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_zoo_import_paths_of_these_modules_work_in_the_tf1_mode(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, SCRIPT, timeout=280)
    assert found == {
        "values": [0, 1, 2, 3],
        "estimator": True,
        "mode_keys": "train",
        "run_config": True,
        "task_type": "evaluator",
        "block_cells": ["GRUCell", "LSTMCell"],  # 1.15's block cells' modules hold contrib.rnn's renames
        "train_and_evaluate": True,
        "predict_output": "PredictOutput",
        "global_step": 0,
        "model_variables": ["weights"],
        "audio": [0.5, -0.25],
        "rate": 16000,
        "mfcc_shape": [1, 3, 13],
        "upsampled_shape": [1, 8, 5],
        "canned": "tensorflow.python.estimator.canned",  # not provided: our estimator has no canned estimators
    }
