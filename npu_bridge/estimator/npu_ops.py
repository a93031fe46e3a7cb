"""Upstream import path ``npu_bridge.estimator.npu_ops`` (facade)."""

from npu_bridge.core.compute.dropout import dropout
from npu_bridge.core.compute.fused_adam import adam_apply_one_assign, adam_apply_one_with_decay_assign
from npu_bridge.core.compute.indexing import k_means_centroids, scatter_elements
from npu_bridge.core.compute.lars import lars as LARS  # noqa: N812  (upstream's name)
from npu_bridge.core.compute.lars import lars_v2 as LARSV2  # noqa: N812
from npu_bridge.core.compute.lstm_cell import basic_lstm_cell
from npu_bridge.core.runtime.unsupported import unsupported
from npu_bridge.core.session.system_ops import initialize_system, shutdown_system
from npu_bridge.core.training.outfeed import (
    channel_get_next,
    outfeed_dequeue_op,
    outfeed_enqueue_op,
    stop_outfeed_dequeue_op,
)

__all__ = [
    "dropout",
    "adam_apply_one_assign",
    "adam_apply_one_with_decay_assign",
    "k_means_centroids",
    "scatter_elements",
    "LARS",
    "LARSV2",
    "basic_lstm_cell",
    "channel_get_next",
    "outfeed_dequeue_op",
    "outfeed_enqueue_op",
    "stop_outfeed_dequeue_op",
    "initialize_system",
    "shutdown_system",
    "NPUInit",
    "NPUShutdown",
    "npu_onnx_graph_op",
]

NPUInit = initialize_system
NPUShutdown = shutdown_system

_MODULE = "npu_bridge.estimator.npu_ops"
npu_onnx_graph_op = unsupported(
    f"{_MODULE}.npu_onnx_graph_op",
    "it compiles and runs an ONNX model with Ascend's "
    "ATC compiler on the NPU; load ONNX models with an ONNX runtime instead",
)
