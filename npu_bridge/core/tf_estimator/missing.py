"""Names of TensorFlow's ``tf.estimator`` that npu_bridge's ``tf.estimator`` does not provide.

Looking such a name up (``tf.estimator.DNNClassifier``, ``tf.estimator.inputs.pandas_input_fn``, ...) raises
``NotProvidedError`` saying so and what to write instead, rather than a bare ``AttributeError``.
``NotProvidedError`` is an ``AttributeError`` too, and names starting with "_" (dunders, private probes) raise a
plain ``AttributeError``, so ``hasattr``, ``getattr(module, name, default)``, ``from module import submodule``
and introspection behave as on any module.
"""

import re

from npu_bridge.core.runtime.errors import NotProvidedError

_CANNED = re.compile(r"^(Baseline|BoostedTrees|DNN|DNNLinearCombined|Linear|KMeans|RNN|TimeSeries)\w*$|Head$")
_MODEL_FN_ADVICE = (
    "write a model_fn(features, labels, mode, params) that builds the network (tf.compat.v1.layers.dense, ...) "
    "and returns a tf.estimator.EstimatorSpec, and train it with tf.estimator.Estimator(model_fn)"
)
GENERIC_ADVICE = (
    "use one of those, or write what you need on tf.compat.v1: a model_fn for tf.estimator.Estimator, an input_fn "
    "returning a tf.data.Dataset, a tf.compat.v1.train.SessionRunHook"
)


def _tensorflow_version():
    import tensorflow as tf

    return ".".join(tf.__version__.split(".")[:2])


def message(module, name, provided, advice=GENERIC_ADVICE):
    """Returns the error message for ``module.name`` missing from npu_bridge's Estimator.

    Args:
      module: the public module path, e.g. "tf.estimator".
      name: the name looked up.
      provided: the public names the module has.
      advice: what to do instead (canned estimators and heads always get the model_fn advice).
    Returns:
      The message: what is missing, why, what the module provides and what to do instead.
    """
    canned = bool(_CANNED.search(name))
    what = "a canned estimator (or head), which" if canned else "a name that"
    return (
        f"{module}.{name} is {what} is not provided by npu_bridge's tf.estimator on TensorFlow "
        f"{_tensorflow_version()} (TensorFlow removed tf.estimator in 2.16; npu_bridge provides "
        f"{', '.join(provided)} in {module}). Instead, {_MODEL_FN_ADVICE if canned else advice}."
    )


def module_getattr(module, provided, advice=GENERIC_ADVICE):
    """Returns a module-level ``__getattr__`` raising ``NotProvidedError`` for names the module lacks.

    Args:
      module: the public module path used in messages, e.g. "tf.estimator".
      provided: the public names the module has (its ``__all__``), listed in the message.
      advice: what to do instead of using a missing name.
    Returns:
      A function of one name that raises ``AttributeError`` for names starting with "_" and
      ``NotProvidedError`` (also an ``AttributeError``) for any other name.
    """
    provided = sorted(provided)

    def __getattr__(name):  # noqa: N807  (the module-level __getattr__ of PEP 562)
        if name.startswith("_"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise NotProvidedError(message(module, name, provided, advice))

    return __getattr__
