"""Upstream import path for Keras model to NPUEstimator (facade)."""

from npu_bridge.core.npu_estimator.keras_model import model_to_npu_estimator

__all__ = ["model_to_npu_estimator"]
