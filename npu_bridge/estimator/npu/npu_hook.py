"""Upstream import path for session run hooks (facade)."""

from npu_bridge.distributed.variable_broadcast import NPUBroadcastGlobalVariablesHook, broadcast_global_variables
from npu_bridge.pending import pending

NPUShutDownHook = pending("npu_bridge.estimator.npu.npu_hook.NPUShutDownHook", "estimator")
NPUCheckpointSaverHook = pending("npu_bridge.estimator.npu.npu_hook.NPUCheckpointSaverHook", "estimator")
SetIterationsVarHook = pending("npu_bridge.estimator.npu.npu_hook.SetIterationsVarHook", "estimator")
NPUOutputTensorHook = pending("npu_bridge.estimator.npu.npu_hook.NPUOutputTensorHook", "estimator")
TellMeStepOrLossHook = pending("npu_bridge.estimator.npu.npu_hook.TellMeStepOrLossHook", "estimator")
NPULogOutfeedSessionHook = pending("npu_bridge.estimator.npu.npu_hook.NPULogOutfeedSessionHook", "estimator")
NPUInfeedOutfeedSessionHook = pending("npu_bridge.estimator.npu.npu_hook.NPUInfeedOutfeedSessionHook", "estimator")
