"""tensorflow_addons on the Keras 2 that ``tf.keras`` is here, for user code of both modes.

tensorflow-addons 0.23.0, its last release (pinned as npu_bridge's ``tfa`` extra), imports Keras internals from the
Keras 2.13-2.15 layout (``from keras.src.engine import keras_tensor``, ``from keras.src import backend``). On
TensorFlow 2.21 ``keras`` is Keras 3, which has no ``keras.src.engine``, so ``import tensorflow_addons`` fails;
tf_keras 2.21 has those modules under ``tf_keras.src``, and ``tf.keras`` is tf_keras once npu_bridge is on. While
the route of ``legacy_modules`` is on (the TF1 mode, the TF2 adapter), this route makes every ``import keras...``
inside the ``tensorflow_addons`` package give ``tf_keras...`` (``keras.src.engine`` is ``tf_keras.src.engine``).
Nothing is put in ``sys.modules``: Keras 3 and every other package keep their ``keras``.

The wheel's C++ custom ops were built against TensorFlow 2.15 and do not load into 2.21 (undefined symbols), so
the first ``import tensorflow_addons...`` statement sets ``TF_ADDONS_PY_OPS=1`` unless the user set it:
tensorflow_addons then takes its Python version of each op that has one, without trying the library first and
warning; an op without one (``tfa.image.resampler``, ``tfa.layers.CorrelationCost``, ``EmbeddingBag``) raises
TensorFlow's ``NotFoundError`` naming the library.
"""

import importlib
import importlib.util
import os
import sys

from npu_bridge.core.runtime import user_imports

PACKAGE = "tensorflow_addons"
PY_OPS_VARIABLE = "TF_ADDONS_PY_OPS"
_ROUTE = "tensorflow_addons-keras"
_PY_OPS_ROUTE = "tensorflow_addons-py-ops"


def add_route():
    """Gives tensorflow_addons tf_keras for its ``keras`` imports from now on (once per process).

    Called when user code gets Keras 2 (``legacy_modules.add_route``); does nothing when tensorflow_addons is not
    installed.

    Returns:
      True when the route is on.
    """
    if user_imports.has_route(_ROUTE):
        return True
    if importlib.util.find_spec(PACKAGE) is None:
        return False
    user_imports.add_route(_PY_OPS_ROUTE, (PACKAGE,), _every_module, _python_ops_first)
    user_imports.add_route(_ROUTE, ("keras",), _in_addons, _resolve)
    return True


def _every_module(module_globals):
    return True


def _in_addons(module_globals):
    name = module_globals.get("__name__")
    return isinstance(name, str) and (name == PACKAGE or name.startswith(PACKAGE + "."))


def _python_ops_first(name, module_globals, module_locals, fromlist, proceed):
    """``import tensorflow_addons...``: its ``options`` read TF_ADDONS_PY_OPS at their import, so set it before."""
    if PACKAGE not in sys.modules:
        os.environ.setdefault(PY_OPS_VARIABLE, "1")
    return proceed(name, module_globals, module_locals, fromlist, 0)


def _resolve(name, module_globals, module_locals, fromlist, proceed):
    """What ``import keras...`` inside tensorflow_addons gets: the same path under ``tf_keras``."""
    real = "tf_keras" + name[len("keras") :]
    try:
        found = importlib.import_module(real)
        if not fromlist:
            return importlib.import_module("tf_keras")  # `import keras.src.x` binds `keras`
        for entry in fromlist:
            if entry != "*" and not hasattr(found, entry):
                try:
                    importlib.import_module(f"{real}.{entry}")
                except ModuleNotFoundError as error:
                    if error.name != f"{real}.{entry}":
                        raise  # the submodule exists but something it imports does not
        return found
    except ModuleNotFoundError as error:
        error.add_note(
            f"npu_bridge gives {module_globals.get('__name__')}'s `{name}` as {real} (tf_keras, the Keras tf.keras "
            "is here; docs/tf2_adapter.md, 'tensorflow_addons')"
        )
        raise
