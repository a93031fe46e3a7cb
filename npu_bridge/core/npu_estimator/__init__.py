"""The NPUEstimator runtime: NPURunConfig and its sub-configs, NPUEstimator, NPU hooks, savers and job info.

estimator     ``NPUEstimator`` and ``NPUEstimatorSpec``
run_config    ``NPURunConfig``: a ``RunConfig`` that also carries the NpuOptimizer options of the run
hooks         the session run hooks of upstream's ``npu_hook``
saver         ``NPUSaver`` / ``NPUBulkSaverBuilder``, the Saver NPUEstimator checkpoints with
keras_model   ``keras_to_npu.model_to_npu_estimator``: an NPUEstimator that trains a compiled Keras model
job_info      the job information upstream's NPUEstimator reads: a job start file, else the environment
"""
