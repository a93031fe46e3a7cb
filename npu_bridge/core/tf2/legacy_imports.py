"""Switching on Keras 2.6 and TensorFlow-internal imports for user code, and ``python -m npu_bridge.tf2``.

``import npu_device`` installs it (``install``, which also installs ``keras26``'s rules once tf_keras is imported):
from then on user code's ``import keras...`` /
``tensorflow.python.keras...`` gets tf_keras 2.21 and the moved TensorFlow-internal modules are found, through the
route the TF1 mode adds too (``runtime/legacy_modules``; the tables are ``runtime/legacy_paths``). An import that
ran before is not redone: a module that already holds Keras 3 is named in a warning. ``python -m npu_bridge.tf2
train.py`` (and ``npu-run --tf2``) installs it before the script's first line, for scripts that import ``keras``
before ``npu_device``, and in every Python the script starts (``environment``); with ``--py-compat``
(``NPU_BRIDGE_TF2_PY_COMPAT=1``) it also gives back the Python-level names NumPy 2 and SciPy removed
(``runtime/py_compat``), as the TF1 mode's ``--py-compat`` does.
With ``TF_USE_LEGACY_KERAS=0`` (Keras 3 kept for ``tf.keras``) nothing is installed: standalone ``keras`` stays
Keras 3 too. Installing imports no TensorFlow.
"""

import os
import runpy
import sys
import types

from npu_bridge.core.runtime import absl_enum_strings, after_import, legacy_modules, log, user_code, user_imports
from npu_bridge.core.tf2 import environment as tf2_environment

USAGE = "usage: python -m npu_bridge.tf2 [--py-compat] SCRIPT [ARGS...] | [--py-compat] -m MODULE [ARGS...]"
_ROUTE = "tf2"
_user_code = user_code.UserCode()


def install():
    """Maps user code's Keras 2.6 and TensorFlow-internal imports from now on (idempotent).

    Returns:
      True when the mapping is on.
    Raises:
      EnvironmentVariableError: TF_USE_LEGACY_KERAS has a value TensorFlow would read ambiguously.
    """
    if user_imports.has_route(_ROUTE):
        return True
    if not legacy_modules.add_route(_ROUTE, _user_code.contains):
        return False
    absl_enum_strings.install()  # DEFINE_enum with a string, as absl-py 0.x took it
    if tf2_environment.py_compat():
        from npu_bridge.core.runtime import py_compat  # imports NumPy: only in processes that asked for it

        py_compat.install()
    # Keras 2.6's optimizer generation and 1-D inputs, which `import npu_device` installs: here from the moment
    # tf_keras is first imported (`from tensorflow.keras.optimizers import Adam` above `import npu_device`)
    after_import.when_imported("tf_keras", _install_keras26)
    early = _modules_holding_keras_3()
    if early:
        log.logger.warning(
            "%s imported Keras 3 (`keras`) before npu_device was imported, and keeps it; the Keras 2.6 imports of "
            "Ascend scripts get tf_keras (tf.keras) only after `import npu_device`. Import npu_device first, or run "
            "the script with `python -m npu_bridge.tf2` (docs/tf2_adapter.md)",
            ", ".join(early),
        )
    return True


def main(argv=None):
    """``python -m npu_bridge.tf2 SCRIPT [ARGS]`` / ``-m MODULE [ARGS]``: runs it as ``__main__`` with the mapping on.

    Returns:
      0 when it ran (its own ``SystemExit`` or exception propagates), 2 for bad arguments.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--py-compat"]:
        os.environ[tf2_environment.PY_COMPAT_VARIABLE] = "1"  # here and in every child Python
        argv = argv[1:]
    if not argv or argv[0] in ("-h", "--help") or argv == ["-m"]:
        sys.stderr.write(USAGE + "\n")
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    os.environ.update(tf2_environment.for_children(os.environ))  # the Pythons the script starts map imports too
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        sys.path[0] = os.getcwd()
        install()
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.isfile(script):
        sys.stderr.write(f"npu_bridge.tf2: cannot run {script!r}: no such file\n{USAGE}\n")
        return 2
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    install()
    runpy.run_path(script, run_name="__main__")
    return 0


def _install_keras26(_tf_keras):
    from npu_bridge.core.tf2 import keras26

    keras26.install()


def _modules_holding_keras_3():
    """The user modules whose globals hold a Keras 3 module, class or function (imported before the mapping)."""
    keras = sys.modules.get("keras")
    if not isinstance(keras, types.ModuleType):
        return []
    found = {}
    for name, module in list(sys.modules.items()):
        if id(module) in found or not isinstance(module, types.ModuleType) or not _user_code.contains(vars(module)):
            continue
        if any(_from_keras_3(value) for value in list(vars(module).values())):
            found[id(module)] = vars(module).get("__name__", name)  # __main__ also sits in sys.modules as __mp_main__
    return sorted(found.values())


def _from_keras_3(value):
    if isinstance(value, types.ModuleType):
        name = vars(value).get("__name__", "")
    else:
        name = getattr(value, "__module__", None) if isinstance(value, type) or callable(value) else None
    return isinstance(name, str) and (name == "keras" or name.startswith("keras."))
