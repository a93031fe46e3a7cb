"""TF 2.6 semantics of ``tf.keras`` for scripts that ``import npu_device`` (docs/tf2_adapter.md, "TensorFlow 2.6
semantics of tf.keras"): Keras 2.6's optimizer generation with a float step for learning-rate schedules, 1-D
inputs of ``fit`` as ``(batch, 1)``, ``tf.keras.__version__``; and ``tf.compat.v1.estimator.tpu`` behind
``compat.enable_v1()``. Each script runs in a fresh interpreter, as a user runs it."""

import pytest
from helpers.tf2 import run_script as _run

NEW = "tf_keras.src.optimizers.adam.Adam"
LEGACY = "tf_keras.src.optimizers.legacy."

OPTIMIZER_LIBRARY = """import tensorflow as tf


def make():
    return tf.keras.optimizers.Adam(0.1)
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_tf_keras_optimizers_are_keras_2_6_ones_and_a_schedule_gets_a_float_step(tmp_path):
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "optimizer_library.py").write_text(OPTIMIZER_LIBRARY)
    result, _ = _run("keras26_optimizers.py", tmp_path, pythonpath=[str(site)])
    assert result["step_dtypes"] == ["float32"]  # rsqrt(step) has a kernel: the schedule trains
    assert result["fit_losses"][-1] < 0.9 * result["fit_losses"][0]
    assert result["loop_losses"][-1] < 0.9 * result["loop_losses"][0]  # NpuLossScaleOptimizer over the SGD
    for how in (
        "tf.keras.optimizers.Adam",
        "tf.optimizers.SGD",
        "from tensorflow.keras.optimizers import Adam",
        "from tensorflow.keras import optimizers; optimizers.RMSprop",
        "tf.keras.optimizers.get('sgd')",
        "compile(optimizer='adam')",
    ):
        assert result[how].startswith(LEGACY), (how, result[how])
    assert result["isinstance Optimizer"] and result["isinstance LossScaleOptimizer"]
    assert result["experimental.Adam"] == NEW  # asked for by its new name
    assert result["library"] == NEW  # an installed package keeps tf_keras 2.21's optimizers


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_fit_evaluate_and_predict_take_1d_arrays_as_columns_as_keras_2_6(tmp_path):
    result, _ = _run("keras26_fit_1d_inputs.py", tmp_path)
    for name in ("functional", "subclassed", "sequential"):
        model = result[name]
        assert "error" not in model, (name, model)
        assert model["losses"][1] < 0.5 * model["losses"][0], (name, model)
        assert model["predict_shape"] == [64, 1] and model["predict_on_batch_shape"] == [8, 1]
        assert len(model["evaluate"]) == 2 and model["evaluate"][0] < model["losses"][0]
    # the subclassed model computes what the functional one on Input(shape=(1,)) does, from the same seed
    assert result["subclassed"]["losses"] == pytest.approx(result["functional"]["losses"], rel=1e-4)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_tf_keras_version_is_readable_as_in_keras_2_6(tmp_path):
    result, _ = _run("keras26_version.py", tmp_path)
    assert set(result.values()) == {"2.21.0"}  # tf_keras', as user code's keras.__version__


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_run_classifier_style_tpu_estimator_trains_behind_compat_enable_v1(tmp_path):
    result, _ = _run("compat_v1_tpu_estimator.py", tmp_path)
    assert result["estimator"] == "npu_bridge.core.tf_estimator.tpu.estimator.TPUEstimator"
    assert result["global_step"] == 20 and result["loss"] < result["start_loss"] / 2


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_tf_keras_mixed_precision_experimental_is_tensorflow_2_6s(tmp_path):
    result, _ = _run("keras26_mixed_precision.py", tmp_path)
    assert result == {
        "policy": "mixed_float16",
        "loss_scale": 128.0,
        "auto": "dynamic",
        "float32_auto": None,
        "layer": ["float16", "float32"],
        "fixed": [False, 64.0],
        "dynamic": [True, 32768.0],
        "is_keras_lso": True,
        "finite": True,
        "bad": 'Policy: loss_scale must be "dynamic", None or a positive number, got -1',
        "after": "float32",
    }
