"""Installs ``npu_bridge.core.tf_estimator`` as ``tf.estimator`` when TensorFlow has no Estimator of its own."""

import importlib
import sys

from npu_bridge.core.runtime import log

_ALIASES = ("tensorflow.estimator", "tensorflow.compat.v1.estimator", "tensorflow.compat.v2.estimator")


def tensorflow_has_estimator():
    """True when the installed TensorFlow provides a working ``tf.compat.v1.estimator.Estimator``."""
    import tensorflow as tf

    try:
        return hasattr(tf.compat.v1.estimator, "Estimator")
    except Exception:  # a missing or broken tensorflow_estimator
        return False


def install():
    """Makes ``tf.estimator`` / ``tf.compat.v1.estimator`` this project's Estimator unless TensorFlow has one.

    Returns:
      True when it installed the Estimator (now or earlier), False when TensorFlow's own is in place.
    """
    import tensorflow as tf

    from npu_bridge.core import tf_estimator

    if getattr(tf, "estimator", None) is tf_estimator:
        return True
    if tensorflow_has_estimator():
        return False
    # `import tensorflow.compat.v1` (as TF1 scripts write it) loads the module that tf.compat.v1 then names,
    # which is not the one tf.compat.v1 named before: import the canonical modules first.
    modules = [tf] + [importlib.import_module(name) for name in ("tensorflow.compat.v1", "tensorflow.compat.v2")]
    for module in modules + [tf.compat.v1, tf.compat.v2]:
        module.estimator = tf_estimator
    for alias in _ALIASES:
        sys.modules[alias] = tf_estimator
    log.logger.debug("tf.estimator is npu_bridge.core.tf_estimator (TensorFlow %s ships none)", tf.__version__)
    return True
