"""Upstream import path for session run hooks (facade)."""

from npu_bridge.core.npu_estimator.hooks import (
    NPUCheckpointSaverHook,
    NPUInfeedOutfeedSessionHook,
    NPULogOutfeedSessionHook,
    NPUOutputTensorHook,
    NPUShutDownHook,
    SetIterationsVarHook,
    TellMeStepOrLossHook,
)
from npu_bridge.core.training.distributed.variable_broadcast import (
    NPUBroadcastGlobalVariablesHook,
    broadcast_global_variables,
)

__all__ = [
    "NPUBroadcastGlobalVariablesHook",
    "broadcast_global_variables",
    "NPUCheckpointSaverHook",
    "NPUInfeedOutfeedSessionHook",
    "NPULogOutfeedSessionHook",
    "NPUOutputTensorHook",
    "NPUShutDownHook",
    "SetIterationsVarHook",
    "TellMeStepOrLossHook",
]
