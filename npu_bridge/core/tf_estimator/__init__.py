"""A ``tf.estimator`` for TensorFlow versions that no longer ship one (TensorFlow removed it in 2.16).

``import npu_bridge`` installs this package as ``tf.estimator`` and ``tf.compat.v1.estimator`` when the
installed TensorFlow has no Estimator (see ``install.py``), so Estimator scripts -- NPUEstimator ones and plain
``tf.estimator`` ones -- run on TensorFlow 2.21. It is written for this project on ``tf.compat.v1``
MonitoredSession; the canned estimators (DNNClassifier, ...) and distributed (TF_CONFIG) training are not
provided: looking up a name this package lacks raises ``NotProvidedError`` (an ``AttributeError``) saying so and
what to write instead (see ``missing.py``).

estimator     ``Estimator`` on ``tf.compat.v1`` MonitoredSession
calling       how ``model_fn`` and ``input_fn`` are called: only with the arguments their signatures take
spec          ``EstimatorSpec``; mode_keys: ``ModeKeys``
run_config    ``RunConfig``; run_log: the Estimator's log messages, through the ``tensorflow`` logger
training      ``TrainSpec``, ``EvalSpec``, ``train_and_evaluate`` (local)
warm_start    ``WarmStartSettings``
export        serving input receivers and SavedModel export; inputs: numpy input functions (TF1)
experimental  TensorFlow 1.15's early-stopping hooks
install       installs this package as ``tf.estimator``; missing: the names it does not provide
tpu/          ``tf.estimator.tpu``: TPUEstimator without a TPU
"""

import tensorflow as _tf

from npu_bridge.core.tf_estimator import experimental, export, inputs, missing, tpu
from npu_bridge.core.tf_estimator.estimator import Estimator
from npu_bridge.core.tf_estimator.export import Exporter, FinalExporter, LatestExporter
from npu_bridge.core.tf_estimator.mode_keys import ModeKeys
from npu_bridge.core.tf_estimator.run_config import RunConfig
from npu_bridge.core.tf_estimator.spec import EstimatorSpec
from npu_bridge.core.tf_estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from npu_bridge.core.tf_estimator.warm_start import WarmStartSettings

_train = _tf.compat.v1.train
VocabInfo = _train.VocabInfo
SessionRunHook = _train.SessionRunHook
SessionRunArgs = _train.SessionRunArgs
SessionRunContext = _train.SessionRunContext
SessionRunValues = _train.SessionRunValues
CheckpointSaverHook = _train.CheckpointSaverHook
CheckpointSaverListener = _train.CheckpointSaverListener
FeedFnHook = _train.FeedFnHook
FinalOpsHook = _train.FinalOpsHook
GlobalStepWaiterHook = _train.GlobalStepWaiterHook
LoggingTensorHook = _train.LoggingTensorHook
NanLossDuringTrainingError = _train.NanLossDuringTrainingError
NanTensorHook = _train.NanTensorHook
ProfilerHook = _train.ProfilerHook
SecondOrStepTimer = _train.SecondOrStepTimer
StepCounterHook = _train.StepCounterHook
StopAtStepHook = _train.StopAtStepHook
SummarySaverHook = _train.SummarySaverHook

__all__ = [
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "Estimator",
    "EstimatorSpec",
    "EvalSpec",
    "Exporter",
    "FeedFnHook",
    "FinalExporter",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "LatestExporter",
    "LoggingTensorHook",
    "ModeKeys",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "ProfilerHook",
    "RunConfig",
    "SecondOrStepTimer",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
    "TrainSpec",
    "VocabInfo",
    "WarmStartSettings",
    "experimental",
    "export",
    "inputs",
    "tpu",
    "train_and_evaluate",
]
__getattr__ = missing.module_getattr("tf.estimator", __all__)
