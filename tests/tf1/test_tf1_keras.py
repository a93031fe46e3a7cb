"""Keras of the script's era for user code in the TF1 mode (``python -m npu_bridge.tf1``): standalone ``keras`` and
``tensorflow.python.keras`` are tf_keras (Keras 2) in the Keras 2.2-2.6 layouts, through the route the TF2 adapter
uses too (``npu_bridge/core/runtime/legacy_modules.py``); installed packages keep Keras 3 and TensorFlow's own copy.

The mode wraps ``__import__`` for the whole process, so every test runs a script in a child process.
"""

import os
import subprocess
import sys

import helpers.tf1
import helpers.tf2
import pytest
from helpers.collectives import parse_results
from helpers.paths import REPO_ROOT, TESTS_DIR

from npu_bridge.core.tf1 import environment

# A Keras 2.2-era script: standalone keras first (before any `import tensorflow`), Keras 2.2 module paths, a custom
# layer on keras.engine.topology, keras.activations.relu(x, alpha=...), model._layers, ImageDataGenerator, fit,
# Model(input=..., output=...).
STANDALONE_KERAS = """
import json
import numpy as np
import keras
from keras import backend as K
from keras.layers import Dense, LSTM
from keras.layers.core import Dropout
from keras.layers.normalization import BatchNormalization
from keras.preprocessing.image import ImageDataGenerator
from keras.engine.topology import Layer
import keras.backend.tensorflow_backend as KTF
from keras.backend.tensorflow_backend import set_session
from keras.engine import Input as EngineInput, Layer as EngineLayer, Model as EngineModel, get_source_inputs
import keras.engine.training
from keras.layers import Deconvolution3D
from keras.layers.convolutional import Deconv2D
from keras.utils import Sequence
from keras.applications.resnet50 import preprocess_input
from keras_applications.imagenet_utils import _obtain_input_shape, preprocess_input as applications_preprocess
import tensorflow as tf
import library

tf.set_random_seed(0)  # the initial weights, dropout and fit's shuffling the same in every run: the loss falls
np.random.seed(0)


class Scale(Layer):
    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(1,), initializer="ones")
        super(Scale, self).build(input_shape)

    def call(self, x):
        return x * self.w


rng = np.random.RandomState(0)
model = keras.models.Sequential([LSTM(4, input_shape=(5, 3)), BatchNormalization(), Dropout(0.1), Dense(1), Scale()])
model.compile(optimizer="sgd", loss="mse")
history = model.fit(rng.rand(16, 5, 3), rng.rand(16, 1), epochs=3, batch_size=8, verbose=0)
images = next(ImageDataGenerator(horizontal_flip=True).flow(rng.rand(4, 8, 8, 3), batch_size=2, shuffle=False))
inputs = keras.layers.Input((3,))
legacy = keras.models.Model(input=inputs, output=Dense(2)(inputs))  # Keras 1's names, which Keras 2.2 still took
relu = K.eval(keras.activations.relu(tf.constant([-1.0, 2.0]), alpha=0.0))
leaky = K.eval(keras.activations.relu(tf.constant([-1.0, 2.0]), alpha=0.5))
print("RESULT " + json.dumps({"name": "keras", "value": {
    "version": keras.__version__, "dense": Dense.__module__, "batch_norm": BatchNormalization.__module__,
    "sequence": Sequence.__module__, "resnet50": preprocess_input.__module__, "eager": tf.executing_eagerly(),
    "losses": [round(v, 6) for v in history.history["loss"]], "images": list(images.shape),
    "relu": relu.tolist(), "leaky": leaky.tolist(), "layers": len(model._layers),
    "last_layer": model._layers[-1] is model.layers[-1], "library": library.SEEN,
    "legacy_model": [len(legacy.inputs), len(legacy.outputs)],
    "engine": [EngineInput is keras.layers.Input, EngineLayer is Layer, EngineModel is keras.engine.training.Model,
               len(get_source_inputs(legacy.outputs[0]))],
    "deconvolution": [Deconvolution3D.__name__, Deconv2D.__name__],
    "tensorflow_backend": [set_session is K.set_session, KTF.get_session is K.get_session],
    "keras_applications": [
        list(_obtain_input_shape(None, default_size=224, min_size=32, data_format=K.image_data_format(),
                                 require_flatten=False)),
        applications_preprocess(np.ones((1, 2, 2, 3), "float32"), backend=K, layers=keras.layers,
                                models=keras.models, utils=keras.utils)[0, 0, 0].astype(float).round(3).tolist()]}}))
"""

# tensorflow.python.keras imports of a TF 1.15 script (Sequence, LSTM, BatchNormalization, layers.normalization)
TF_PYTHON_KERAS = """
import json
import numpy as np
import tensorflow as tf
from tensorflow.python.keras.utils import Sequence
from tensorflow.python.keras.layers import LSTM, BatchNormalization
from tensorflow.python.keras.layers import normalization
import tensorflow.python.keras.layers as KL
import library


class Batches(Sequence):
    def __len__(self):
        return 2

    def __getitem__(self, index):
        rng = np.random.RandomState(index)
        return rng.rand(8, 5, 3), rng.rand(8, 1)


model = tf.keras.Sequential([LSTM(4, input_shape=(5, 3)), BatchNormalization(), KL.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
history = model.fit(Batches(), epochs=3, verbose=0)
print("RESULT " + json.dumps({"name": "tf_python_keras", "value": {
    "sequence": Sequence.__module__, "lstm": LSTM.__module__, "batch_norm": BatchNormalization.__module__,
    "normalization_bn": normalization.BatchNormalization is BatchNormalization, "dense": KL.Dense.__module__,
    "tf_python_keras": tf.python.keras.layers.LSTM is LSTM, "eager": tf.executing_eagerly(),
    "losses": len(history.history["loss"]), "library": library.SEEN}}))
"""

# An installed package importing the same names: Keras 3 and TensorFlow's own tensorflow.python.keras
LIBRARY = """
import keras
import tensorflow.python.keras as tf_python_keras
from tensorflow.python.keras import layers

SEEN = {
    "keras": keras.__version__.split(".")[0],
    "has_layers_core": hasattr(keras.layers, "core"),
    "tf_python_keras": tf_python_keras.__name__,
    "tf_python_keras_file": "tf_keras" not in (tf_python_keras.__file__ or ""),
    "layers": layers.__name__,
}
"""
LIBRARY_SEEN = {
    "keras": "3",
    "has_layers_core": False,
    "tf_python_keras": "tensorflow.python.keras",
    "tf_python_keras_file": True,
    "layers": "tensorflow.python.keras.layers",
}


def _run_in_mode(tmp_path, script):
    """Runs ``script.py`` in the TF1 mode with ``library.py`` in a site-packages directory on the path."""
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "library.py").write_text(LIBRARY)
    (tmp_path / "script.py").write_text(script)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR, str(site)]), TF_CPP_MIN_LOG_LEVEL="2")
    env.pop(environment.MODE_VARIABLE, None)
    env.pop("TF_USE_LEGACY_KERAS", None)
    argv = [sys.executable, "-m", "npu_bridge.tf1", "script.py"]
    result = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return parse_results("\n".join(f"[rank 0] {line}" for line in result.stdout.splitlines()))[0]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_standalone_keras_is_keras_2_in_the_keras_2_2_layout_and_libraries_keep_keras_3(tmp_path):
    seen = _run_in_mode(tmp_path, STANDALONE_KERAS)["keras"]
    losses = seen.pop("losses")
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert seen == {
        "version": seen["version"],
        "dense": "tf_keras.src.layers.core.dense",
        "batch_norm": "tf_keras.src.layers.normalization.batch_normalization_v1",  # Keras 2.2's BatchNormalization
        "sequence": "tf_keras.src.utils.data_utils",
        "resnet50": "tf_keras.src.applications.resnet",
        "eager": False,  # the first Keras import set up TensorFlow 1.x, as Keras 2.2 ran on it
        "images": [2, 8, 8, 3],
        "relu": [0.0, 2.0],
        "leaky": [-0.5, 2.0],
        "layers": 6,  # Keras 2.2's Sequential._layers: the input layer, then the five added
        "last_layer": True,
        "library": LIBRARY_SEEN,
        "legacy_model": [1, 1],
        "engine": [True, True, True, 1],
        "deconvolution": ["Conv3DTranspose", "Conv2DTranspose"],  # Keras 2.2's aliases
        "tensorflow_backend": [True, True],  # Keras 2.2-2.3's keras.backend.tensorflow_backend
        # keras_applications, which TensorFlow 1.15 installed with itself, given the script's Keras: caffe's BGR means
        "keras_applications": [[None, None, 3], [-102.939, -115.779, -122.68]],
    }
    assert seen["version"].startswith("2.")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_tensorflow_python_keras_is_tf_keras_for_user_code_and_tensorflow_s_own_for_libraries(tmp_path):
    seen = _run_in_mode(tmp_path, TF_PYTHON_KERAS)["tf_python_keras"]
    assert seen == {
        "sequence": "tf_keras.src.utils.data_utils",
        "lstm": "tf_keras.src.layers.rnn.lstm_v1",  # TensorFlow 1.15's layers.LSTM was the v1 layer
        "batch_norm": "tf_keras.src.layers.normalization.batch_normalization_v1",
        "normalization_bn": True,
        "dense": "tf_keras.src.layers.core.dense",
        "tf_python_keras": True,
        "eager": False,
        "losses": 3,
        "library": LIBRARY_SEEN,
    }


MODEL_LAYERS = """
import json
import tensorflow as tf


class Block(tf.keras.layers.Layer):  # a TCN residual block: sub-layers as attributes
    def __init__(self):
        super().__init__()
        self.first, self.second = tf.keras.layers.Dense(3), tf.keras.layers.Dense(4)

    def call(self, x):
        return self.second(self.first(x))


class OwnList(tf.keras.layers.Layer):  # a Keras 2.2-era layer keeping its sub-layers in self._layers
    def __init__(self):
        super().__init__()
        self._layers = [tf.keras.layers.Dense(2)]

    def call(self, x):
        return self._layers[0](x)


inputs = tf.keras.Input((4,))
block, own = Block(), OwnList()
model = tf.keras.Model(inputs, own(block(inputs)))
dense = tf.keras.layers.Dense(2)
try:
    dense.output
except AttributeError as error:
    message = str(error)
print("RESULT " + json.dumps({
    "layers": [type(layer).__name__ for layer in model._layers],
    "same_list": model._layers is model._self_tracked_trackables,
    "block": [type(layer).__name__ for layer in block._layers],
    "own_weights": len(own.trainable_weights),
    "model_weights": len(model.trainable_weights),
    "property_error": message,
}))
"""


@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode", ["npu_bridge.tf1", "npu_bridge.tf2"])
def test_layer_layers_is_there_when_the_script_only_uses_tf_keras(mode, tmp_path):
    # a Keras-TCN script of the zoo copies model._layers and its TCN layer's _layers, never importing keras
    script = tmp_path / "tcn_summary.py"
    script.write_text(MODEL_LAYERS)
    seen, _ = helpers.tf2.run_script(str(script), tmp_path, env={"NPU_BRIDGE_TF1_QUIET": "1"}, launcher=("-m", mode))
    assert seen == {
        "layers": ["InputLayer", "Block", "OwnList"],
        "same_list": True,
        "block": ["Dense", "Dense"],
        "own_weights": 2,  # the layers a layer assigns to self._layers are tracked, as in Keras
        "model_weights": 6,
        "property_error": "Layer dense_3 has no inbound nodes.",  # a property's own AttributeError
    }


MIXED_PRECISION = """
import json
import tensorflow as tf

experimental = tf.keras.mixed_precision.experimental
policy = experimental.Policy("mixed_float16")
optimizer = experimental.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), 128)
seen = {"loss_scale": policy.loss_scale, "dynamic": optimizer.dynamic}
seen["scale"] = float(tf.keras.backend.get_session().run(optimizer.loss_scale))
try:
    experimental.set_policy(policy)  # TensorFlow 1.15 too asked for v2 dtype behaviour first
except ValueError as error:
    seen["refused"] = "V2 dtype behavior" in str(error)
tf.keras.layers.enable_v2_dtype_behavior()
experimental.set_policy(policy)
seen["global"] = experimental.global_policy().name
print("RESULT " + json.dumps(seen))
"""


@pytest.mark.timeout(300)
def test_tf_keras_mixed_precision_experimental_is_there_in_the_mode(tmp_path):
    # NCF's ncf_keras_main.py of the zoo sets its policy and loss scale through the experimental module
    seen = helpers.tf1.run_tf1_script(tmp_path, MIXED_PRECISION)
    assert seen == {
        "loss_scale": "dynamic",
        "dynamic": False,
        "scale": 128.0,
        "refused": True,
        "global": "mixed_float16",
    }


SCALAR_LOSS_MODEL = """
import json
import numpy as np
import tensorflow as tf
from keras import backend as K
from keras.layers import Dense, Input, Lambda
from keras.models import Model
from keras.optimizers import SGD

def squared_error(args):  # the whole loss, computed in the model (YAD2K's yolo_loss, keras-yolo3, DB)
    output, target = args
    return tf.reduce_mean(tf.square(output - target))

x, t = Input((4,)), Input((1,))
loss = Lambda(squared_error, output_shape=(1,), name="model_loss")([Dense(1)(x), t])
model = Model([x, t], loss)
model.compile(optimizer=SGD(0.1), loss={"model_loss": lambda y_true, y_pred: y_pred})
rng = np.random.RandomState(0)
X, T = rng.rand(8, 4).astype("float32"), rng.rand(8, 1).astype("float32")
before = float(K.function([x, t], [loss])([X, T])[0])
history = model.fit([X, T], np.zeros(8), batch_size=8, epochs=5, shuffle=False, verbose=0)
print("RESULT " + json.dumps({"before": before, "losses": history.history["loss"]}))
"""


@pytest.mark.timeout(300)
def test_a_keras_2_2_model_whose_output_is_the_scalar_loss_trains(tmp_path):
    # tf_keras' graph-mode compile indexed the last dimension of the scalar and failed building the loss
    seen = helpers.tf1.run_tf1_script(tmp_path, SCALAR_LOSS_MODEL)
    assert seen["losses"][0] == pytest.approx(seen["before"], rel=1e-6)  # the first step's loss is the model's output
    assert all(later < earlier for earlier, later in zip(seen["losses"], seen["losses"][1:]))
