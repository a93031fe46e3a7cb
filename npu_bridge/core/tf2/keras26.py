"""``tf.keras`` as Keras 2.6 showed it to the scripts Ascend's TF2 adapter ran, for user code (``user_code``).

``import npu_device`` installs four rules (``install``); the code TensorFlow, tf_keras and other installed packages
run is unchanged:

- Optimizer generation. ``tf.keras.optimizers.Adam`` / ``SGD`` / ``RMSprop`` / ``Adagrad`` / ``Adadelta`` /
  ``Adamax`` / ``Nadam`` / ``Ftrl`` / ``Optimizer`` (and ``tf.optimizers.*``) reached by user code are the
  OptimizerV2 classes Keras 2.6 had (``tf.keras.optimizers.legacy.*``); ``tf.keras.optimizers.get`` /
  ``deserialize`` called by user code, and ``model.compile(optimizer="adam")`` (a name or a config) in user code,
  build them too. Their update casts ``iterations`` to the variable's dtype before calling a
  ``LearningRateSchedule``, so a schedule gets a float step as in 2.6 (tf_keras 2.21's optimizers pass an int64
  one, on which ``tf.math.rsqrt`` has no kernel). Installed packages asking for ``tf.keras.optimizers.Adam`` get
  tf_keras 2.21's own.
- One-dimensional inputs. ``fit`` / ``evaluate`` / ``predict`` and ``*_on_batch`` called by user code give the
  model's ``train_step`` / ``test_step`` / ``predict_step`` each rank-1 tensor of ``x``, ``y`` and
  ``sample_weight`` as ``(batch, 1)``, as Keras 2.6's steps did (tf_keras 2.21 passes them as they are).
- ``tf.keras.mixed_precision.experimental`` (``Policy`` with a ``loss_scale``, ``set_policy``, ``global_policy``,
  ``LossScaleOptimizer(optimizer, loss_scale)``), which tf_keras 2.21 removed, is there again
  (``legacy_mixed_precision``), add-only, for every importer.
- ``tf.keras.__version__`` (also ``tf.compat.v1.keras``'s, ``from tensorflow import keras``) is tf_keras's version,
  as ``keras.__version__`` of user code is (Keras 2.6 had one; the API module of tf_keras has none).

Who asks is read from the calling frame: the first frame outside npu_bridge, npu_device and TensorFlow's lazy
loader (``tf.optimizers``) decides, by the same rule as the Keras 2.6 imports (``user_code``).
"""

import functools
import sys
import threading
import types

import tensorflow as tf
import tf_keras
from tf_keras.api._v1 import keras as keras_v1_api
from tf_keras.api._v2 import keras as keras_api
from tf_keras.src import optimizers as keras_optimizers
from tf_keras.src.engine import training

from npu_bridge.core.runtime import after_import, keras_selection, legacy_mixed_precision, user_code, user_imports

# the names tf.keras.optimizers had in Keras 2.6 that tf_keras 2.21 gives to its new optimizer generation
LEGACY_NAMES = ("Adadelta", "Adagrad", "Adam", "Adamax", "Ftrl", "Nadam", "Optimizer", "RMSprop", "SGD")
# modules whose frames ask on behalf of their caller: this project's, and TensorFlow's lazy loader (tf.optimizers)
_TRANSPARENT_PACKAGES = ("npu_bridge", "npu_device")
_TRANSPARENT_MODULES = ("tensorflow.python.util.lazy_loader",)
_KERAS_3_KEPT = ("0", "false", "False")
_FIT_METHODS = ("fit", "evaluate", "predict", "train_on_batch", "test_on_batch", "predict_on_batch")
_STEP_METHODS = ("train_step", "test_step", "predict_step")
_EXPAND = "_npu_expand_1d"  # set on a model when user code runs it
_KERAS_COPY = "tensorflow.keras"  # TensorFlow loads tf_keras' API modules again under this name when imported
_ROUTE = "tf2-keras26"

_lock = threading.Lock()
_installed = []
_user_code = user_code.UserCode()


def install():
    """Installs the four rules (once per process), unless ``tf.keras`` is Keras 3 (``TF_USE_LEGACY_KERAS=0``).

    Returns:
      True when they are installed.
    """
    with _lock:
        if _installed:
            return True
        if keras_selection.choice() in _KERAS_3_KEPT:
            return False
        _FOR_USER.update({name: getattr(keras_api.optimizers.legacy, name) for name in LEGACY_NAMES})
        _adapt(keras_api)
        if "__version__" not in vars(keras_v1_api):  # tf.compat.v1.keras: its optimizers are OptimizerV2 already
            keras_v1_api.__version__ = tf_keras.__version__
        _adapt_imported()  # `tensorflow.keras` imported as a module is a copy of tf_keras' API module
        for copy in (_KERAS_COPY, _KERAS_COPY + ".optimizers"):  # loaded by an import statement under way now
            after_import.when_imported(copy, lambda _module: _adapt_imported())
        # every importer: an installed package's `from tensorflow.keras import backend` (tensorflow_addons) loads the
        # copy too, and rebinds user code's `tf.keras` to it
        user_imports.add_route(_ROUTE, ("tensorflow",), _every_module, _resolve)
        _wrap(training.Model, "compile", _compile_for_caller)
        for name in _FIT_METHODS:
            _wrap(training.Model, name, _marking_user_runs)
        for name in _STEP_METHODS:
            _wrap(training.Model, name, _expanding_1d)
        _installed.append(True)
        return True


def called_from_user_code(depth=1):
    """True when the caller ``depth`` frames up (past npu_bridge's and the lazy loader's frames) is user code."""
    frame = sys._getframe(depth + 1)
    while frame is not None and _transparent(frame.f_globals.get("__name__")):
        frame = frame.f_back
    return frame is not None and _user_code.contains(frame.f_globals)


def _transparent(module_name):
    if not isinstance(module_name, str):
        return False
    return module_name in _TRANSPARENT_MODULES or module_name.partition(".")[0] in _TRANSPARENT_PACKAGES


def legacy_get(identifier, **kwargs):
    """``tf.keras.optimizers.get`` as user code gets it: a name or a config builds an OptimizerV2 optimizer."""
    kwargs.setdefault("use_legacy_optimizer", True)
    return keras_optimizers.get(identifier, **kwargs)


def legacy_deserialize(config, custom_objects=None, **kwargs):
    """``tf.keras.optimizers.deserialize`` as user code gets it: an OptimizerV2 optimizer."""
    kwargs.setdefault("use_legacy_optimizer", True)
    return keras_optimizers.deserialize(config, custom_objects, **kwargs)


class _OptimizersForUserCode(types.ModuleType):
    """The class of ``tf.keras.optimizers``: user code reading a Keras 2.6 name gets its OptimizerV2 class."""

    def __getattribute__(self, name):
        if name in _FOR_USER and called_from_user_code():
            return _FOR_USER[name]
        return super().__getattribute__(name)


_FOR_USER = {"get": legacy_get, "deserialize": legacy_deserialize}


def _adapt(keras_module):
    """Gives an API module of tf_keras (``tf.keras``, or its copy ``tensorflow.keras``) the rules."""
    if "__version__" not in vars(keras_module):
        keras_module.__version__ = tf_keras.__version__
    mixed_precision = vars(keras_module).get("mixed_precision")
    if isinstance(mixed_precision, types.ModuleType):
        legacy_mixed_precision.add_experimental(mixed_precision)
    optimizers = vars(keras_module).get("optimizers")
    if type(optimizers) is types.ModuleType:  # noqa: E721  (exactly a plain module: not adapted yet)
        optimizers.__class__ = _OptimizersForUserCode


def _adapt_imported():
    keras_module = sys.modules.get(_KERAS_COPY)
    if isinstance(keras_module, types.ModuleType):
        _adapt(keras_module)
    optimizers = sys.modules.get(_KERAS_COPY + ".optimizers")
    if type(optimizers) is types.ModuleType:  # noqa: E721  (exactly a plain module: not adapted yet)
        optimizers.__class__ = _OptimizersForUserCode


def _every_module(module_globals):
    return True


def _resolve(name, module_globals, module_locals, fromlist, proceed):
    """Any module's ``import tensorflow...``: imported as usual; a copy of the Keras API it loaded gets the rules
    (``tensorflow.keras`` then replaces ``tf.keras``, also for user code)."""
    found = proceed(name, module_globals, module_locals, fromlist, 0)
    if name == _KERAS_COPY or name.startswith(_KERAS_COPY + "."):
        _adapt_imported()
    return found


def _wrap(cls, name, wrapper):
    method = getattr(cls, name)
    wrapped = wrapper(method)
    wrapped._npu_keras26 = method
    setattr(cls, name, wrapped)


def _compile_for_caller(compile_method):
    @functools.wraps(compile_method)
    def compile(self, optimizer="rmsprop", *args, **kwargs):  # noqa: A001  (Keras' method name)
        if isinstance(optimizer, (str, dict)) and called_from_user_code():
            optimizer = legacy_get(optimizer)
        return compile_method(self, optimizer, *args, **kwargs)

    return compile


def _marking_user_runs(run_method):
    @functools.wraps(run_method)
    def run(self, *args, **kwargs):
        if called_from_user_code():
            self.__dict__[_EXPAND] = True  # past Keras' attribute tracking: a plain flag
        return run_method(self, *args, **kwargs)

    return run


def _expanding_1d(step_method):
    @functools.wraps(step_method)
    def step(self, data):
        if self.__dict__.get(_EXPAND):
            data = tf.nest.map_structure(_as_column, data)
        return step_method(self, data)

    return step


def _as_column(value):
    if isinstance(value, tf.Tensor) and value.shape.rank == 1:
        return tf.expand_dims(value, -1)
    return value
