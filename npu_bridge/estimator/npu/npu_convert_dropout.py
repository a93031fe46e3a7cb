"""Upstream import path ``npu_bridge.estimator.npu.npu_convert_dropout``: importing it makes Keras ``Dropout``
layers use NPU dropout (see ``npu_bridge.core.compute.keras_dropout``)."""

from npu_bridge.core.compute import keras_dropout

__all__ = []  # imported for its effect

keras_dropout.install()
