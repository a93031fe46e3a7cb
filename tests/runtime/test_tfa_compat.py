"""tensorflow_addons (0.23.0, its last release, npu_bridge's ``tfa`` extra) for user code of both modes: its
``keras.src`` imports get tf_keras (``runtime/addons_keras``), its custom ops their Python versions, and the names the
model zoo uses give the values their algorithms define, computed here with numpy. The test extra installs
tensorflow-addons (and the typeguard it needs)."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from helpers.paths import REPO_ROOT
from helpers.tf2 import run_script

from npu_bridge.core.runtime import addons_keras

GRADS = np.array([[0.5, -1.5], [2.0, 0.25]])  # tests/data/tf2/scripts/tfa_zoo_names.py: kernel, bias
START = np.array([[1.0, -2.0], [0.5, 3.0]])


def _adam(var, grads, lr, steps, weight_decay=0.0, b1=0.9, b2=0.999, eps=1e-7):
    """OptimizerV2 Adam, with AdamW's decoupled decay (``var -= weight_decay * var``) before each update."""
    var, m, v = var.copy(), np.zeros_like(var), np.zeros_like(var)
    for t in range(1, steps + 1):
        var -= weight_decay * var
        m = b1 * m + (1 - b1) * grads
        v = b2 * v + (1 - b2) * grads**2
        var -= lr * math.sqrt(1 - b2**t) / (1 - b1**t) * m / (np.sqrt(v) + eps)
    return var


def _lamb_step(var, grad, lr, weight_decay, adapt, b1=0.9, b2=0.999, eps=1e-6):
    """One LAMB step from zero moments: Adam's direction plus decay, scaled by ||var|| / ||update|| when adapted."""
    m_hat = (1 - b1) * grad / (1 - b1)
    v_hat = (1 - b2) * grad**2 / (1 - b2)
    update = m_hat / (np.sqrt(v_hat) + eps) + weight_decay * var
    ratio = np.linalg.norm(var) / np.linalg.norm(update) if adapt else 1.0
    return var - lr * ratio * update


def _radam(var, grad, lr, steps, b1=0.9, b2=0.999, eps=1e-7, threshold=5.0):
    """Rectified Adam with a constant gradient: the momentum step until the variance's SMA length reaches 5."""
    var, m, v = var.copy(), np.zeros_like(var), np.zeros_like(var)
    sma_inf = 2 / (1 - b2) - 1
    for t in range(1, steps + 1):
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad**2
        m_hat, v_hat = m / (1 - b1**t), np.sqrt(v / (1 - b2**t))
        sma = sma_inf - 2 * t * b2**t / (1 - b2**t)
        if sma >= threshold:
            rect = math.sqrt((sma - 4) * (sma - 2) * sma_inf / ((sma_inf - 4) * (sma_inf - 2) * sma))
            var -= lr * rect * m_hat / (v_hat + eps)
        else:
            var -= lr * m_hat
    return var


def _normalized(x, axes, eps=1e-3):
    return (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_zoo_s_tensorflow_addons_names_give_their_algorithms_values_after_import_npu_device(tmp_path):
    result, _ = run_script("tfa_zoo_names.py", tmp_path)
    assert result["version"] == "0.23.0"
    close = {"rtol": 1e-5, "atol": 1e-6}
    np.testing.assert_allclose(result["adamw"], _adam(START, GRADS, 0.01, 2, weight_decay=0.1), **close)
    lamb = [_lamb_step(START[0], GRADS[0], 0.01, 0.01, True), _lamb_step(START[1], GRADS[1], 0.01, 0.0, False)]
    np.testing.assert_allclose(result["lamb"], lamb, **close)  # "bias" is excluded from decay and adaptation
    np.testing.assert_allclose(result["radam"], [_radam(START[i], GRADS[i], 0.01, 6) for i in range(2)], **close)
    # Lookahead, 2 SGD steps then the sync: slow + 0.5 * (fast - slow)
    np.testing.assert_allclose(result["lookahead"], START - 0.5 * 2 * 0.1 * GRADS, **close)
    # SWA from step 0, every step: the mean of the three iterates; the variables hold the last until assigned
    np.testing.assert_allclose(result["swa_last"], START - 3 * 0.1 * GRADS, **close)
    np.testing.assert_allclose(result["swa_average"], START - 2 * 0.1 * GRADS, **close)
    # an AveragedOptimizerWrapper subclass in consistency_training's shape trains a model around user code's Adam
    assert result["subclass_inner"] == "tf_keras.src.optimizers.legacy.adam"
    assert result["subclass_losses"][-1] < result["subclass_losses"][0]
    for name in ("radam_fit_losses", "adamw_fit_losses"):  # keras-bert's compile, Swin's wrapped AdamW
        assert result[name][-1] < result[name][0] / 2, name

    images = np.array(result["images"])
    np.testing.assert_allclose(result["pool_1x1"], images.mean(axis=(1, 2), keepdims=True), **close)
    np.testing.assert_allclose(result["pool_2x2"], images.reshape(2, 2, 2, 2, 2, 3).mean(axis=(2, 4)), **close)
    np.testing.assert_array_equal(result["rotate"], np.rot90(images, 1, axes=(1, 2)))  # counter-clockwise
    x = np.array([-1.5, 0.0, 2.0])
    gelu = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))  # tfa's default: the tanh form
    np.testing.assert_allclose(result["gelu"], gelu, **close)
    np.testing.assert_allclose(result["mish"], x * np.tanh(np.log1p(np.exp(x))), **close)
    np.testing.assert_allclose(result["group_norm"], _normalized(images, (1, 2, 3)), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(result["instance_norm"], _normalized(images, (1, 2)), rtol=1e-4, atol=1e-5)
    assert result["f1"] == pytest.approx(2 / 3)  # both classes: one hit, one miss
    focal = [-0.25 * 0.2**2 * math.log(0.8), -0.75 * 0.3**2 * math.log(0.7)]  # alpha 0.25, gamma 2
    np.testing.assert_allclose(result["focal"], focal, **close)
    assert result["gather_tree"] == [[[2, 1]], [[3, 4]]]  # beams traced back through their parents
    assert result["py_ops"] == ["1", True]  # Python ops first: the custom-op library is never loaded
    assert result["user_adam"] == "tf_keras.src.optimizers.legacy.adam"  # still Keras 2.6's generation


TF1_SCRIPT = """
from npu_bridge.npu_init import *
import json
import math
import numpy as np
import tensorflow as tf
import tensorflow_addons as tfa

image = tf.placeholder(tf.float32, [4, 4, 3])
ops = {  # Fixmatch's augment_ops: rotate, translate_x / _y, shear_x / _y
    "rotate": tfa.image.transform_ops.rotate(image, 90 * math.pi / 180.0),
    "translate_x": tfa.image.translate_ops.translate(image, [-1, 0]),
    "translate_y": tfa.image.translate_ops.translate(image, [0, -2]),
    "shear_x": tfa.image.transform_ops.transform(image, [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
    "shear_y": tfa.image.transform_ops.transform(image, [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]),
}
kernel = tf.get_variable("kernel", initializer=[1.0, -2.0], use_resource=True)
loss = tf.reduce_sum(kernel * tf.constant([0.5, -1.5]))
lamb = tfa.optimizers.LAMB(learning_rate=0.01, weight_decay_rate=0.01, epsilon=1e-6)
train = lamb.apply_gradients(zip(tf.gradients(loss, [kernel]), [kernel]))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    values = sess.run(ops, {image: np.arange(48, dtype=np.float32).reshape(4, 4, 3)})
    sess.run(train)
    result = {"eager": tf.executing_eagerly(), "lamb": sess.run(kernel).tolist()}
result.update({name: value.tolist() for name, value in values.items()})
print("RESULT " + json.dumps(result))
"""


def _moved(image, source):
    """``out[y, x] = image[source(y, x)]``, zero where the source falls outside (nearest, integral coordinates)."""
    out = np.zeros_like(image)
    for y in range(image.shape[0]):
        for x in range(image.shape[1]):
            sy, sx = source(y, x)
            if 0 <= sy < image.shape[0] and 0 <= sx < image.shape[1]:
                out[y, x] = image[sy, sx]
    return out


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_tf1_mode_runs_fixmatch_s_tensorflow_addons_image_ops_in_a_session(tmp_path):
    (tmp_path / "augment.py").write_text(TF1_SCRIPT)
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_USE_LEGACY_KERAS", None)
    env.pop("NPU_BRIDGE_TF1", None)
    argv = [sys.executable, "-W", "ignore", "-m", "npu_bridge.tf1", "augment.py"]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    result = json.loads([line for line in done.stdout.splitlines() if line.startswith("RESULT ")][0][7:])
    image = np.arange(48, dtype=np.float32).reshape(4, 4, 3)
    assert result["eager"] is False  # TensorFlow 1.x behaviour, graph mode
    np.testing.assert_array_equal(result["rotate"], np.rot90(image))
    np.testing.assert_array_equal(result["translate_x"], _moved(image, lambda y, x: (y, x + 1)))
    np.testing.assert_array_equal(result["translate_y"], _moved(image, lambda y, x: (y + 2, x)))
    np.testing.assert_array_equal(result["shear_x"], _moved(image, lambda y, x: (y, x + y)))
    np.testing.assert_array_equal(result["shear_y"], _moved(image, lambda y, x: (y + x, x)))
    expected = _lamb_step(np.array([1.0, -2.0]), np.array([0.5, -1.5]), 0.01, 0.01, True)
    np.testing.assert_allclose(result["lamb"], expected, rtol=1e-5)


def test_keras_imports_inside_tensorflow_addons_resolve_to_tf_keras_and_nowhere_else():
    import tf_keras.src.engine

    addons = {"__name__": "tensorflow_addons.utils.types"}
    found = addons_keras._resolve("keras.src.engine", addons, None, ("keras_tensor",), None)
    assert found is tf_keras.src.engine and found.keras_tensor.__name__ == "tf_keras.src.engine.keras_tensor"
    assert addons_keras._resolve("keras.src", addons, None, None, None) is tf_keras  # `import keras.src` binds keras
    assert addons_keras._in_addons(addons) and addons_keras._in_addons({"__name__": "tensorflow_addons"})
    for other in ("keras.src.layers", "tensorflow_addons_extra", "__main__", None):  # Keras 3, other packages
        assert not addons_keras._in_addons({"__name__": other})
    with pytest.raises(ModuleNotFoundError) as raised:
        addons_keras._resolve("keras.src.engine.no_such_module", addons, None, ("x",), None)
    assert "tf_keras.src.engine.no_such_module" in "\n".join(raised.value.__notes__)
