"""Legacy Keras (tf_keras) for TF1 scripts, whatever the order in which the script imports things.

TensorFlow 2.21 routes ``tf.keras`` to Keras 3 unless ``TF_USE_LEGACY_KERAS`` is true. It reads the variable twice:
at its own import, to set the module search paths behind ``import tensorflow.keras...`` /
``from tensorflow.keras import layers``; and at the first use of each of its lazy Keras names (``tf.keras``,
``tf.compat.v1.keras``, ``tf.compat.v1.layers``, ``tf.losses``, ``tf.optimizers``, ...), which then stay bound
to the Keras they resolved to. TF1 code (``tf.compat.v1.layers``, Keras models in a ``tf.compat.v1.Session``,
the NPU Keras helpers) needs legacy Keras, so when npu_bridge switches on:

0. ``TF_USE_LEGACY_KERAS`` set to anything but 1 / true / True (legacy Keras), 0 / false / False (Keras 3) or
   "" (unset): npu_bridge refuses to switch on with an ``EnvironmentVariableError``. TensorFlow reads exactly
   "1", "true" and "True" as true and every other value as false, so "TRUE", " 1", "yes" or a typo would
   silently give Keras 3 and TF1 code would fail later, far from the cause.
1. ``TF_USE_LEGACY_KERAS`` set to 0 / false / False by the user: Keras 3 was chosen; nothing changes.
2. TensorFlow not imported yet (npu_bridge imported first): ``TF_USE_LEGACY_KERAS=1`` is set before TensorFlow's
   import, so TensorFlow selects legacy Keras everywhere itself.
3. TensorFlow imported first, but none of its Keras names used yet: ``TF_USE_LEGACY_KERAS=1`` is set, which the
   lazy names read at their first use, and TensorFlow's module search paths are pointed at tf_keras as its
   import would have done with the variable set. Every Keras name gives legacy Keras.
4. TensorFlow imported first and a Keras name already resolved to Keras 3 (``tf.keras.layers``,
   ``from tensorflow.keras import layers``, ``tf.losses...`` used before npu_bridge was imported): switching is
   not safe, since the script may hold Keras 3 modules and objects, and settings made on Keras 3 (floatx, image
   data format, mixed precision policy) would silently be lost. npu_bridge refuses to switch on with a
   ``KerasVersionError`` saying what to change; nothing is changed, so Keras 2 and Keras 3 never mix silently.

Keras 3 imported on its own (``import keras``) is the script's choice and not checked.
"""

import importlib.util
import os
import sys
import types

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import EnvironmentVariableError, KerasVersionError, shortened

VARIABLE = "TF_USE_LEGACY_KERAS"
_TRUE = ("true", "True", "1")  # what TensorFlow reads as true (tensorflow/__init__.py, python/util/lazy_loader.py)
_FALSE = ("false", "False", "0")  # TensorFlow reads every other value as false; only these are a clear choice


def select(before_import=False):
    """Makes TensorFlow give legacy Keras in this process, or raises when it no longer can (module docstring).

    Call it before TensorFlow's import when possible; after it, it also repairs TensorFlow's Keras search paths.

    Args:
      before_import: True when TensorFlow's import is about to run (its module may already be in sys.modules).
    Raises:
      EnvironmentVariableError: TF_USE_LEGACY_KERAS is set to an unclear value (module docstring).
      KerasVersionError: TensorFlow already resolved one of its Keras names to Keras 3.
    """
    chosen = choice()
    if chosen in _FALSE:
        log.logger.debug("%s=%r: keeping the Keras TensorFlow chose", VARIABLE, chosen)
        return
    if before_import or "tensorflow" not in sys.modules:
        os.environ[VARIABLE] = "1"
        return
    resolved = keras3_names()
    if resolved:
        raise KerasVersionError(_message(resolved, chosen))
    os.environ[VARIABLE] = "1"
    if _point_search_paths_at_tf_keras():
        log.logger.debug("TensorFlow was imported before npu_bridge; legacy Keras selected before any use of tf.keras")


def choice(environ=None):
    """Returns TF_USE_LEGACY_KERAS as the user set it: "1", "true", "True", "0", "false", "False", or None when it
    is unset or empty.

    Raises:
      EnvironmentVariableError: it holds anything else (TensorFlow would silently take it as false).
    """
    value = (os.environ if environ is None else environ).get(VARIABLE)
    if not value:
        return None
    if value not in _TRUE + _FALSE:
        raise EnvironmentVariableError(
            f"{VARIABLE} has invalid value {shortened(value)}: TensorFlow reads exactly 1, true and True as true "
            "and anything else as false (Keras 3 for tf.keras), while npu_bridge needs legacy Keras (tf_keras) for "
            "TF1 code, so it does not guess. Allowed: 1 / true / True (legacy Keras), 0 / false / False (keep "
            "Keras 3), or unset (npu_bridge sets 1)"
        )
    return value


def keras3_names():
    """Returns the TensorFlow names already bound to Keras 3 in this process, e.g. ["tf.keras"].

    Looks at TensorFlow's API modules only (never imports anything): its lazy Keras names that resolved to
    Keras 3, and modules imported as ``tensorflow.keras...`` from Keras 3's files.
    """
    keras = sys.modules.get("keras")
    keras_root = _package_root(keras) if isinstance(keras, types.ModuleType) else None
    if keras_root is None:
        return []
    found = []
    for name, module in list(sys.modules.items()):
        if not (name == "tensorflow" or name.startswith("tensorflow.")) or not isinstance(module, types.ModuleType):
            continue
        if _inside(vars(module).get("__file__"), keras_root):  # vars: never wake a lazy module
            found.append(name)
        if name == "tensorflow" or name.startswith("tensorflow._api."):
            found.extend(f"{_public_name(name)}.{attr}" for attr in _keras3_attributes(module))
    return sorted(set(found), key=lambda n: (n not in ("tf.keras", "tensorflow.keras"), n))


def _keras3_attributes(module):
    try:
        attributes = list(vars(module).items())
    except TypeError:
        return []
    names = []
    for attr, value in attributes:
        if attr.startswith("_") or not isinstance(value, types.ModuleType):
            continue
        own = vars(value)
        if "_tfll_keras_version" in own or "_tfll_initialized" in own:  # a lazy Keras name of TensorFlow
            if own.get("_tfll_initialized") and own.get("_tfll_keras_version") == "keras_3":
                names.append(attr)
        elif str(own.get("__name__", "")).split(".")[0] == "keras":  # a resolved one, replaced by its module
            names.append(attr)
    return names


def _point_search_paths_at_tf_keras():
    """Replaces Keras 3's API folders in the search paths of TensorFlow's API modules by tf_keras's.

    Returns:
      True when a search path changed.
    """
    keras_spec = importlib.util.find_spec("keras")
    tf_keras_spec = importlib.util.find_spec("tf_keras")
    if keras_spec is None or tf_keras_spec is None:
        return False
    keras_root = list(keras_spec.submodule_search_locations or [None])[0]
    tf_keras_root = list(tf_keras_spec.submodule_search_locations or [None])[0]
    if keras_root is None or tf_keras_root is None:
        return False
    keras_api = os.path.join(keras_root, "api")
    changed = False
    for name, module in list(sys.modules.items()):
        if not (name == "tensorflow" or name.startswith("tensorflow._api.")) or not isinstance(
            module, types.ModuleType
        ):
            continue
        paths = vars(module).get("__path__")
        if not isinstance(paths, list):
            continue
        replaced = [
            os.path.join(tf_keras_root, os.path.relpath(p, keras_root)) if _inside(p, keras_api) else p for p in paths
        ]
        if replaced != paths:
            module.__path__ = replaced
            changed = True
    return changed


def _message(resolved, chosen):
    version = getattr(sys.modules.get("keras"), "__version__", "3")
    names = ", ".join(resolved[:3]) + (f" and {len(resolved) - 3} more" if len(resolved) > 3 else "")
    how = "was set after TensorFlow's import" if chosen is not None else "is not set"
    return (
        f"npu_bridge needs legacy Keras (the tf_keras package) for TF1 code, but TensorFlow already gave Keras "
        f"{version} for {names}: it was used before npu_bridge was imported, while {VARIABLE} {how}. Switching "
        "now would mix Keras 3 and Keras 2 in one script. Either import npu_bridge (e.g. `from npu_bridge.npu_init "
        f"import *`) before the first use of tf.keras / tensorflow.keras, or set {VARIABLE}=1 in the environment "
        f"before importing TensorFlow; to keep Keras 3 on purpose, set {VARIABLE}=0."
    )


def _package_root(module):
    paths = vars(module).get("__path__")
    return os.path.normpath(list(paths)[0]) if paths else None


def _inside(path, folder):
    # Module files and search paths come from the same sys.path entries, so normalized prefixes suffice.
    if not isinstance(path, str) or not path:
        return False
    path, folder = os.path.normpath(path), os.path.normpath(folder)
    return path == folder or path.startswith(folder + os.sep)


def _public_name(module_name):
    """The name a script uses for one of TensorFlow's API modules: "tf", "tf.compat.v1", ..."""
    for prefix in ("tensorflow._api.v2.", "tensorflow._api.v1."):
        if module_name.startswith(prefix):
            return "tf." + module_name[len(prefix) :]
    return "tf" + module_name[len("tensorflow") :]
