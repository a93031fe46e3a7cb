"""Upstream import path for NPUEstimator and NPUEstimatorSpec (facade)."""

from npu_bridge.core.npu_estimator.estimator import NPUEstimator, NPUEstimatorSpec
from npu_bridge.core.tf_estimator.estimator import no_check_override

__all__ = ["NPUEstimator", "NPUEstimatorSpec", "no_check_override"]
