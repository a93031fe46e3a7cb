"""``tf.estimator.tpu`` (and ``tf.contrib.tpu``'s Estimator names): TPUEstimator without a TPU.

TensorFlow 1.15 could run a ``TPUEstimator`` script on CPU/GPU with ``use_tpu=False``; this package is that path
over npu_bridge's Estimator, so TPU-era scripts (BERT, EfficientNet, ...) run as written.

config     ``RunConfig`` / ``TPUConfig`` / ``InputPipelineConfig``: TPU run settings as records
estimator  ``TPUEstimator`` as TensorFlow 1.15 ran it with ``use_tpu=False``: one replica, CPU or GPU
spec       ``TPUEstimatorSpec``, and the ``EstimatorSpec`` it becomes
"""

from npu_bridge.core.tf_estimator import missing
from npu_bridge.core.tf_estimator.tpu.config import InputPipelineConfig, RunConfig, TPUConfig
from npu_bridge.core.tf_estimator.tpu.estimator import TPUEstimator
from npu_bridge.core.tf_estimator.tpu.spec import TPUEstimatorSpec

__all__ = ["InputPipelineConfig", "RunConfig", "TPUConfig", "TPUEstimator", "TPUEstimatorSpec"]
__getattr__ = missing.module_getattr("tf.estimator.tpu", __all__)
