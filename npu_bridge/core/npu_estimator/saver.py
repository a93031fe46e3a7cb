"""``NPUSaver`` / ``NPUBulkSaverBuilder``: the Saver NPUEstimator checkpoints with.

On the NPU the bulk builder first copies device-resident variables to the host. Here variables already live
in TensorFlow's memory, so they save and restore exactly as a ``tf.compat.v1.train.Saver`` with TensorFlow's
``BulkSaverBuilder`` (checkpoints are interchangeable with plain TensorFlow ones).
"""

import tensorflow as tf
from tensorflow.python.training import saver as saver_lib


class NPUBulkSaverBuilder(saver_lib.BulkSaverBuilder):
    """Builds one save op for all variables (TensorFlow's BulkSaverBuilder)."""


class NPUSaver(tf.compat.v1.train.Saver):
    """A ``tf.compat.v1.train.Saver`` that builds with ``NPUBulkSaverBuilder`` unless given a builder.

    Takes the arguments of ``tf.compat.v1.train.Saver``.
    """

    def __init__(self, *args, builder=None, **kwargs):
        super().__init__(*args, builder=builder or NPUBulkSaverBuilder(), **kwargs)
