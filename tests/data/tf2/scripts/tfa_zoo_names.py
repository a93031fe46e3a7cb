"""The tensorflow_addons names the model zoo's TF2 scripts use, after ``import npu_device`` as in those scripts:
``tfa.optimizers.AdamW`` (Swin-Transformer, convmixer), ``LAMB`` (the BERT / ALBERT / Transformer
``optimization.py``), ``RectifiedAdam`` (keras-bert), ``Lookahead``, ``SWA`` and an ``AveragedOptimizerWrapper``
subclass in the shape of consistency_training's ``My_SWA``, ``tfa.layers.AdaptiveAveragePooling2D`` (RegNet), and a
few more names. Prints one RESULT line of raw values; the test computes what they must be."""

# isort: skip_file

import json
import os
import warnings

warnings.simplefilter("ignore")  # tensorflow_addons' end-of-life and version notices

import npu_device  # noqa: E402  (first, as the zoo's scripts import it)
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_addons as tfa  # noqa: E402
import tensorflow_addons.optimizers as tfa_optimizers  # noqa: E402  (optimization.py's import)
from tensorflow.python.keras import backend  # noqa: E402
from tensorflow_addons.optimizers.average_wrapper import AveragedOptimizerWrapper  # noqa: E402
from tensorflow_addons.utils import types  # noqa: E402
from typeguard import typechecked  # noqa: E402

npu_device.open().as_default()
tf.keras.utils.set_random_seed(0)
RESULT = {}


def steps(optimizer, variables, grads, count=1):
    """Applies the same gradients ``count`` times; returns the variables' values."""
    for _ in range(count):
        optimizer.apply_gradients([(tf.constant(g), v) for g, v in zip(grads, variables)])
    return [v.numpy().tolist() for v in variables]


GRADS = [[0.5, -1.5], [2.0, 0.25]]


def fresh():
    return [tf.Variable([1.0, -2.0], name="layer/kernel"), tf.Variable([0.5, 3.0], name="layer/bias")]


RESULT["adamw"] = steps(tfa.optimizers.AdamW(weight_decay=0.1, learning_rate=0.01), fresh(), GRADS, 2)
RESULT["lamb"] = steps(
    tfa_optimizers.LAMB(
        learning_rate=0.01,
        weight_decay_rate=0.01,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"],
    ),
    fresh(),
    GRADS,
)
RESULT["radam"] = steps(tfa.optimizers.RectifiedAdam(learning_rate=0.01), fresh(), GRADS, 6)
RESULT["lookahead"] = steps(
    tfa.optimizers.Lookahead(tf.keras.optimizers.SGD(0.1), sync_period=2, slow_step_size=0.5), fresh(), GRADS, 2
)
swa = tfa.optimizers.SWA(tf.keras.optimizers.SGD(0.1), start_averaging=0, average_period=1)
swa_vars = fresh()
RESULT["swa_last"] = steps(swa, swa_vars, GRADS, 3)
swa.assign_average_vars(swa_vars)
RESULT["swa_average"] = [v.numpy().tolist() for v in swa_vars]


class EveryOtherStepAverage(AveragedOptimizerWrapper):
    """A wrapper written as consistency_training's ``My_SWA`` is: typeguard, ``types.Optimizer``, ``_set_hyper``,
    its own int32 ``iterations`` from ``tensorflow.python.keras.backend``, a ``tf.function`` ``average_op``."""

    @typechecked
    def __init__(self, optimizer: types.Optimizer, average_period: int = 2, name: str = "EveryOther", **kwargs):
        super().__init__(optimizer, name, **kwargs)
        self.iterations = backend.variable(0, dtype="int32", name="iterations")
        self._set_hyper("average_period", average_period)

    @tf.function
    def average_op(self, var, average_var, local_apply_state):
        period = self._get_hyper("average_period", tf.dtypes.int32)
        if self.iterations % period == 0:
            snapshots = tf.cast(self.iterations // period, tf.float32)
            return average_var.assign((average_var * snapshots + var) / (snapshots + 1.0))
        return average_var


subclassed = EveryOtherStepAverage(tf.keras.optimizers.Adam())  # user code's Adam: Keras 2.6's generation
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
model.compile(optimizer=subclassed, loss="mse")
x = np.random.RandomState(0).rand(64, 2).astype(np.float32)
y = x @ np.array([[2.0], [-1.0]], np.float32)
RESULT["subclass_losses"] = model.fit(x, y, batch_size=16, epochs=3, verbose=0).history["loss"]
RESULT["subclass_inner"] = type(subclassed._optimizer).__module__

bert = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
bert.compile(tfa.optimizers.RectifiedAdam(learning_rate=0.05), loss="mse")  # keras-bert's compile
RESULT["radam_fit_losses"] = bert.fit(x, y, batch_size=16, epochs=5, verbose=0).history["loss"]
swin = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
swin_optimizer = tfa.optimizers.AdamW(learning_rate=0.05, weight_decay=1e-4)
swin.compile(optimizer=npu_device.distribute.npu_distributed_keras_optimizer_wrapper(swin_optimizer), loss="mse")
RESULT["adamw_fit_losses"] = swin.fit(x, y, batch_size=16, epochs=5, verbose=0).history["loss"]

images = np.arange(2 * 4 * 4 * 3, dtype=np.float32).reshape(2, 4, 4, 3)
RESULT["images"] = images.tolist()
RESULT["pool_1x1"] = tfa.layers.AdaptiveAveragePooling2D(output_size=(1, 1))(images).numpy().tolist()
RESULT["pool_2x2"] = tfa.layers.AdaptiveAveragePooling2D(output_size=(2, 2))(images).numpy().tolist()
RESULT["rotate"] = tfa.image.rotate(images, np.pi / 2).numpy().tolist()
RESULT["gelu"] = tfa.activations.gelu(tf.constant([-1.5, 0.0, 2.0])).numpy().tolist()
RESULT["mish"] = tfa.activations.mish(tf.constant([-1.5, 0.0, 2.0])).numpy().tolist()
RESULT["group_norm"] = tfa.layers.GroupNormalization(groups=1)(images).numpy().tolist()
RESULT["instance_norm"] = tfa.layers.InstanceNormalization()(images).numpy().tolist()
f1 = tfa.metrics.F1Score(num_classes=2, average="macro", threshold=0.5)
f1.update_state(tf.constant([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]), tf.constant([[0.9, 0.1], [0.6, 0.4], [0.2, 0.7]]))
RESULT["f1"] = float(f1.result())
focal = tfa.losses.SigmoidFocalCrossEntropy()  # one loss per sample
RESULT["focal"] = focal(tf.constant([[1.0], [0.0]]), tf.constant([[0.8], [0.3]])).numpy().tolist()
# a custom op with a Python version: taken without trying the library built for TensorFlow 2.15
RESULT["gather_tree"] = (
    tfa.seq2seq.gather_tree(tf.constant([[[1, 2]], [[3, 4]]]), tf.constant([[[0, 0]], [[1, 0]]]), tf.constant([2]), 0)
    .numpy()
    .tolist()
)
RESULT["py_ops"] = [os.environ.get("TF_ADDONS_PY_OPS"), tfa.options.is_custom_kernel_disabled()]
# importing tensorflow_addons (which imports tensorflow.keras) leaves user code Keras 2.6's optimizer generation
RESULT["user_adam"] = type(tf.keras.optimizers.Adam()).__module__
RESULT["version"] = tfa.__version__
print("RESULT " + json.dumps(RESULT))
