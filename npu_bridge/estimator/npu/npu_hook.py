"""Upstream import path for session run hooks (facade)."""

from npu_bridge.distributed.variable_broadcast import NPUBroadcastGlobalVariablesHook, broadcast_global_variables
from npu_bridge.estimator_runtime.hooks import (NPUCheckpointSaverHook, NPUInfeedOutfeedSessionHook,
                                                NPULogOutfeedSessionHook, NPUOutputTensorHook, NPUShutDownHook,
                                                SetIterationsVarHook, TellMeStepOrLossHook)
