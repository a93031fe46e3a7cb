"""Installs the TF1 mode in this process, and runs a script or module in it (``python -m npu_bridge.tf1``).

Installing sets ``TF_USE_LEGACY_KERAS=1`` (unless set), makes child Pythons start in the mode
(``environment.for_children``), adds the route that gives user code Keras of its era (``runtime/legacy_modules``,
shared with the TF2 adapter: standalone ``keras`` and ``tensorflow.python.keras`` are tf_keras) and then the
``tensorflow`` route to ``runtime/user_imports``: ``import
tensorflow.<x>`` of user code gives the facade's ``tf.<x>`` (``facade.submodule``; ``contrib.imported`` below
``tensorflow.contrib``), or TensorFlow's own module where the facade has none (``tensorflow.python.ops``).
TensorFlow itself is imported at the first ``import tensorflow`` of user code, which then also turns v2 behaviour
off (graph mode, as TF 1.x started), switches npu_bridge on and adds the moved names (``aliases``).
"""

import builtins
import os
import runpy
import sys
import types

from npu_bridge.core.runtime import absl_enum_strings, after_import, legacy_modules, py_compat, user_imports
from npu_bridge.core.tf1 import contrib, environment, facade, internal_paths, mnist, random_seeds, scope

USAGE = "usage: python -m npu_bridge.tf1 [--py-compat] SCRIPT [ARGS...] | [--py-compat] -m MODULE [ARGS...]"

_ROUTE = "tf1"
_KERAS_ROUTE = "tf1-keras"
_KERAS_V1_MIXED_PRECISION = "tf_keras.api._v1.keras.mixed_precision"
_tensorflow1 = None
_NPU_INIT = "npu_bridge.npu_init"
_npu_init_for_user = None  # npu_init with the mode's `tf`, made at the first user import from it


def install(script_directory=None):
    """Installs the mode (once per process).

    Args:
      script_directory: the directory of the script about to run (None: ``sys.path[0]`` when first needed).
    Returns:
      The line that says what the mode does, or None when it was already installed.
    """
    if user_imports.has_route(_ROUTE):
        return None
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    os.environ.update(environment.for_children(os.environ))
    user = scope.tf1_user_code(script_directory).contains
    internal_paths.register()  # tensorflow.python.estimator & co. join the Keras route's table
    absl_enum_strings.install()  # DEFINE_enum with a string, as absl-py 0.x took it
    after_import.when_imported("tensorflow.python.framework.random_seed", random_seeds.install)
    # tf.keras.mixed_precision.experimental (Policy, set_policy, LossScaleOptimizer) of TensorFlow 1.15
    after_import.when_imported(_KERAS_V1_MIXED_PRECISION, _add_mixed_precision_experimental)
    # older than the tensorflow route, which passes it tensorflow.python.keras: Keras 2.x scripts ran on TF 1.x,
    # so their first Keras import sets up TensorFlow 1.x behaviour as `import tensorflow` does
    keras2 = legacy_modules.add_route(_KERAS_ROUTE, user, before_first=lambda: _facade(builtins.__import__))
    user_imports.add_route(_ROUTE, {"tensorflow", "tensorflow_core", "npu_bridge"}, user, _resolve, calls_too=True)
    compat = ""
    if environment.py_compat():
        py_compat.install()
        compat = "; Python-level compatibility on (time.clock, NumPy 1.x aliases, collections ABCs, "
        compat += "getargspec, scipy.misc, SciPy's moved modules)"
    keras = " and `import keras` Keras 2" if keras2 else ""
    return (
        "npu_bridge TF1 mode: `import tensorflow` in user code gives TensorFlow 1.x (tensorflow.compat.v1, v2 "
        f"behaviour off, legacy Keras, tf.contrib){keras}; installed packages keep TensorFlow 2{compat} "
        "(docs/tf1_mode.md)"
    )


def _add_mixed_precision_experimental(mixed_precision):
    from npu_bridge.core.runtime import legacy_mixed_precision  # imports tf_keras: only once user code has

    legacy_mixed_precision.add_experimental(mixed_precision)


def install_if_requested():
    """Installs the mode when ``NPU_BRIDGE_TF1=1`` (sitecustomize, ``import npu_bridge``); says so on stderr once
    unless ``NPU_BRIDGE_TF1_QUIET=1``."""
    if environment.requested():
        _say(install())


def main(argv=None):
    """``python -m npu_bridge.tf1 SCRIPT [ARGS]`` / ``-m MODULE [ARGS]``: runs it as ``__main__`` in the mode.

    Returns:
      2 for bad arguments; otherwise the script's own exit (``SystemExit``) or exception propagates.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--py-compat"]:
        os.environ[environment.PY_COMPAT_VARIABLE] = "1"  # here and in every child Python
        argv = argv[1:]
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        sys.stderr.write(USAGE + "\n")
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    if argv[0] == "-m":
        module, arguments = argv[1], argv[2:]
        sys.argv = [module, *arguments]
        sys.path[0] = os.getcwd()
        _say(install(os.getcwd()))
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    script, arguments = argv[0], argv[1:]
    if not os.path.isfile(script):
        sys.stderr.write(f"npu_bridge.tf1: cannot run {script!r}: no such file\n{USAGE}\n")
        return 2
    directory = os.path.dirname(os.path.abspath(script))
    sys.argv = [script, *arguments]
    sys.path[0] = directory
    _say(install(directory))
    runpy.run_path(script, run_name="__main__")
    return 0


def _say(line):
    if line and not environment.quiet():
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _resolve(name, module_globals, module_locals, fromlist, proceed):
    if name.partition(".")[0] == "npu_bridge":
        # `from npu_bridge.npu_init import *` is many scripts' only TensorFlow import: its `tf` must be 1.x as well
        tensorflow1 = _facade(proceed)
        module = proceed(name, module_globals, module_locals, fromlist, 0)
        return _npu_init_view(module, tensorflow1) if name == _NPU_INIT and fromlist else module
    if name.partition(".")[0] == "tensorflow_core":  # the package TensorFlow 1.15's `tensorflow` forwarded to
        name = "tensorflow" + name[len("tensorflow_core") :]
    tensorflow1 = _facade(proceed)
    parts = name.split(".")[1:]
    if parts[:1] == ["contrib"]:
        module = contrib.imported(tensorflow1.contrib, parts[1:], fromlist)
    elif parts[:1] == ["python"]:  # TensorFlow's own, but tensorflow.python.keras is tf_keras (the Keras route)
        module = proceed(name, module_globals, module_locals, fromlist, 0)
    else:
        module = facade.submodule(tensorflow1, parts)
        if module is None:  # TensorFlow's own module (tensorflow.python.ops, tensorflow.core), imported as it is
            module = proceed(name, module_globals, module_locals, fromlist, 0)
    return module if fromlist else tensorflow1


def _npu_init_view(npu_init, tensorflow1):
    """``npu_bridge.npu_init`` as user code imports from it: its names, with ``tf`` the mode's TensorFlow 1.x (the
    one ``import tensorflow as tf`` gives: contrib, integral float dimensions, ...) instead of compat.v1 itself."""
    global _npu_init_for_user
    if _npu_init_for_user is None:
        view = types.ModuleType(_NPU_INIT, npu_init.__doc__)
        view.__dict__.update({k: v for k, v in vars(npu_init).items() if k not in ("__name__", "__doc__")})
        view.tf = tensorflow1
        _npu_init_for_user = view
    return _npu_init_for_user


def _facade(proceed):
    global _tensorflow1
    if _tensorflow1 is None:
        real = proceed("tensorflow", None, None, (), 0)
        real.compat.v1.disable_v2_behavior()
        proceed("npu_bridge", None, None, (), 0)  # switches npu_bridge on, which adds the moved names (aliases)
        contrib_root = contrib.ContribModule("", None, real)
        if not hasattr(real.compat.v1, "contrib"):
            real.compat.v1.contrib = contrib_root  # import tensorflow.compat.v1 as tf; tf.contrib.slim
        # tf.compat is TensorFlow's own (its v1 carries contrib), not tf.compat.v1.compat
        extras = {"contrib": contrib_root, "examples": _examples(), "compat": real.compat}
        if user_imports.has_route(_KERAS_ROUTE):  # import tensorflow.python.keras.layers as KL; tf.python.keras
            extras["python"] = legacy_modules.module("tensorflow.python")
            extras["tools"] = legacy_modules.module("tensorflow.tools")  # tf.tools.graph_transforms (internal_paths)
        _tensorflow1 = facade.TensorFlow1(real, extras)
    return _tensorflow1


def _examples():
    """``tensorflow.examples.tutorials.mnist.input_data``."""
    names = ("tensorflow.examples", "tensorflow.examples.tutorials", "tensorflow.examples.tutorials.mnist")
    examples, tutorials, mnist_package = (types.ModuleType(n) for n in names)
    examples.tutorials, tutorials.mnist, mnist_package.input_data = tutorials, mnist_package, mnist
    return examples
