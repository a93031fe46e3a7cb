"""Upstream import path for Keras callbacks (facade)."""

from npu_bridge.core.training.distributed.variable_broadcast import (
    NPUBroadcastGlobalVariablesCallback,
    broadcast_global_variables,
)

__all__ = ["NPUBroadcastGlobalVariablesCallback", "broadcast_global_variables"]
