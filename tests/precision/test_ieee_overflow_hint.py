"""A run that fails on a NaN / inf in a session computing fp16 with IEEE overflow (cpu backend) says why and what
to set: Ascend's saturation mode would have kept the values finite."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config

v1 = tf.compat.v1
LARGE = np.full((4, 64), 300.0, np.float32)  # each product is 64 * 300 * 300 = 5.76e6, beyond fp16's 65504
HINT = "NPU_BRIDGE_DEVICE_TARGET=ascend"


def run_checked(value, check, **options):
    """Runs ``check`` (a function of a tensor) on ``value @ value.T`` in a bridged session with ``options``."""
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, value.shape, name="x")
        checked = check(tf.matmul(x, x, transpose_b=True, name="product"))
    with v1.Session(graph=graph, config=npu_config(**options)) as sess:
        return sess.run(checked, {x: value})


def check_numerics(tensor):
    return tf.debugging.check_numerics(tensor, "product")


def histogram(tensor):
    return v1.summary.histogram("product", tensor)


@pytest.mark.parametrize("check", [check_numerics, histogram])
@pytest.mark.parametrize("mode", ["allow_mix_precision", "allow_fp32_to_fp16"])
def test_an_fp16_overflow_on_the_cpu_backend_fails_with_the_cause_and_the_fix(check, mode):
    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        run_checked(LARGE, check, precision_mode=mode, device_target="cpu")
    message = raised.value.message
    assert "Tensor had Inf values" in message or "Infinity in Histogram" in message  # TensorFlow's own words stay
    assert f"precision mode {mode}" in message and "on the cpu backend" in message
    assert HINT in message and "precision_mode=must_keep_origin_dtype" in message


def test_the_same_graph_runs_on_the_simulated_backend_where_fp16_saturates():
    value = run_checked(LARGE, check_numerics, precision_mode="allow_mix_precision", device_target="ascend")
    np.testing.assert_array_equal(value, np.full((4, 4), 65504.0, np.float32))


@pytest.mark.parametrize(
    "options",
    [
        {"precision_mode": "must_keep_origin_dtype", "device_target": "cpu"},  # float32: the NaN is the data's own
        {"precision_mode": "allow_mix_precision_bf16", "device_target": "cpu"},  # bfloat16 does not overflow there
        {"device_target": "cpu"},
    ],
)
def test_a_nan_in_a_session_without_fp16_keeps_tensorflows_message_alone(options):
    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        run_checked(np.full((4, 64), np.nan, np.float32), check_numerics, **options)
    assert "Tensor had NaN values" in raised.value.message
    assert HINT not in raised.value.message
