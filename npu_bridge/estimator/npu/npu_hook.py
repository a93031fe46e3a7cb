"""Upstream import path for session run hooks (facade)."""

from npu_bridge.estimator_runtime.hooks import (NPUCheckpointSaverHook, NPUInfeedOutfeedSessionHook,
                                                NPULogOutfeedSessionHook, NPUOutputTensorHook, NPUShutDownHook,
                                                SetIterationsVarHook, TellMeStepOrLossHook)
from npu_bridge.pending import pending

NPUBroadcastGlobalVariablesHook = pending("npu_bridge.estimator.npu.npu_hook.NPUBroadcastGlobalVariablesHook", "collectives")
broadcast_global_variables = pending("npu_bridge.estimator.npu.npu_hook.broadcast_global_variables", "collectives")
