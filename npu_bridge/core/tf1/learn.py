"""The parts of ``tf.contrib.learn`` TF1-era scripts still use, for the TF1 mode.

``ModeKeys`` (contrib.learn's own: "train", "eval", "infer"), ``datasets.mnist`` (the MNIST reader of
``tensorflow.examples.tutorials.mnist``, with ``load_mnist``), ``datasets.base.Datasets``,
``monitored_session`` (TensorFlow's, which contrib.learn re-exported) and ``preprocessing``
(``VocabularyProcessor``, in ``learn_preprocessing``). The rest of contrib.learn (``Experiment``, ``Estimator``,
monitors) is not provided: use ``tf.estimator``.
"""

import types

from tensorflow.python.training import monitored_session

from npu_bridge.core.tf1 import learn_preprocessing, mnist

__all__ = ["ModeKeys", "datasets", "monitored_session", "preprocessing"]


class ModeKeys:
    """The modes of ``tf.contrib.learn`` (its INFER is "infer", as ``tf.estimator.ModeKeys.PREDICT``)."""

    TRAIN = "train"
    EVAL = "eval"
    INFER = "infer"


preprocessing = learn_preprocessing
datasets = types.SimpleNamespace(mnist=mnist, base=types.SimpleNamespace(Datasets=mnist.Datasets))
