"""``import npu_bridge.estimator.npu.npu_convert_dropout``: Keras ``Dropout`` layers use NPU dropout.

As upstream, the import replaces ``Dropout.call`` of Keras (tf-keras, which ``tf.keras`` is here) so that in
training a layer without ``noise_shape`` drops with ``npu_ops.dropout(keep_prob=1 - rate)``; layers with a
noise shape keep Keras' own dropout. Importing twice patches once.
"""

import tensorflow as tf

from npu_bridge.core.compute import dropout


def _npu_dropout_call(original_call):
    def call(self, inputs, training=None):
        if self.noise_shape is not None or not 0 < self.rate < 1:
            return original_call(self, inputs, training=training)
        from tf_keras import backend

        if training is None:
            training = backend.learning_phase()
        return backend.in_train_phase(
            lambda: dropout.dropout(inputs, keep_prob=1.0 - self.rate, seed=self.seed),
            lambda: tf.identity(inputs),
            training=training,
        )

    call._npu_bridge_original = original_call
    call.__doc__ = original_call.__doc__
    return call


def install():
    """Makes Keras Dropout layers use NPU dropout (once)."""
    from tf_keras.layers import Dropout

    if not hasattr(Dropout.call, "_npu_bridge_original"):
        Dropout.call = _npu_dropout_call(Dropout.call)
