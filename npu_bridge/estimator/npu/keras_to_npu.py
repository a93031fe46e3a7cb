"""Upstream import path for Keras model to NPUEstimator (facade)."""

from npu_bridge.pending import pending

model_to_npu_estimator = pending("npu_bridge.estimator.npu.keras_to_npu.model_to_npu_estimator", "estimator")
