"""The NPUEstimator runtime: NPURunConfig and its sub-configs, NPUEstimator, NPU hooks, savers and job info."""
