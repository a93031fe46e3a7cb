"""Upstream import path for NPUEstimator and NPUEstimatorSpec (facade)."""

from npu_bridge.pending import pending

NPUEstimator = pending("npu_bridge.estimator.npu.npu_estimator.NPUEstimator", "estimator")
NPUEstimatorSpec = pending("npu_bridge.estimator.npu.npu_estimator.NPUEstimatorSpec", "estimator")
no_check_override = pending("npu_bridge.estimator.npu.npu_estimator.no_check_override", "estimator")
