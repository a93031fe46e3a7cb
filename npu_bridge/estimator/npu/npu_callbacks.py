"""Upstream import path for Keras callbacks (facade)."""

from npu_bridge.distributed.variable_broadcast import NPUBroadcastGlobalVariablesCallback, broadcast_global_variables
