"""Upstream import path ``npu_bridge.estimator.npu_ops`` (facade)."""

from npu_bridge.outfeed import channel_get_next, outfeed_dequeue_op, outfeed_enqueue_op, stop_outfeed_dequeue_op
from npu_bridge.pending import pending
from npu_bridge.system_ops import initialize_system, shutdown_system

NPUInit = initialize_system
NPUShutdown = shutdown_system

_MODULE = "npu_bridge.estimator.npu_ops"
dropout = pending(f"{_MODULE}.dropout", "compute")
LARS = pending(f"{_MODULE}.LARS", "compute")
LARSV2 = pending(f"{_MODULE}.LARSV2", "compute")
basic_lstm_cell = pending(f"{_MODULE}.basic_lstm_cell", "compute")
adam_apply_one_assign = pending(f"{_MODULE}.adam_apply_one_assign", "compute")
adam_apply_one_with_decay_assign = pending(f"{_MODULE}.adam_apply_one_with_decay_assign", "compute")
scatter_elements = pending(f"{_MODULE}.scatter_elements", "compute")
k_means_centroids = pending(f"{_MODULE}.k_means_centroids", "compute")
npu_onnx_graph_op = pending(f"{_MODULE}.npu_onnx_graph_op", "compute")
