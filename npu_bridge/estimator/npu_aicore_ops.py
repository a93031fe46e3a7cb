"""Upstream import path for AI Core compute ops (facade)."""

import types

from npu_bridge.pending import pending

fast_gelu_v2 = pending("npu_bridge.estimator.npu_aicore_ops.fast_gelu_v2", "compute")
centralization = pending("npu_bridge.estimator.npu_aicore_ops.centralization", "compute")
prelu = pending("npu_bridge.estimator.npu_aicore_ops.prelu", "compute")
dropout_v3 = pending("npu_bridge.estimator.npu_aicore_ops.dropout_v3", "compute")
dropout_v4 = pending("npu_bridge.estimator.npu_aicore_ops.dropout_v4", "compute")
lru_cache_v2 = pending("npu_bridge.estimator.npu_aicore_ops.lru_cache_v2", "compute")
nonzero = pending("npu_bridge.estimator.npu_aicore_ops.nonzero", "compute")
nonzerowithvalue = pending("npu_bridge.estimator.npu_aicore_ops.nonzerowithvalue", "compute")
layer_norm = pending("npu_bridge.estimator.npu_aicore_ops.layer_norm", "compute")
prod_env_mat_a = pending("npu_bridge.estimator.npu_aicore_ops.prod_env_mat_a", "compute")
prodvirialsea = pending("npu_bridge.estimator.npu_aicore_ops.prodvirialsea", "compute")
prodforcesea = pending("npu_bridge.estimator.npu_aicore_ops.prodforcesea", "compute")
tabulatefusionsea = pending("npu_bridge.estimator.npu_aicore_ops.tabulatefusionsea", "compute")
tabulatefusionseagrad = pending("npu_bridge.estimator.npu_aicore_ops.tabulatefusionseagrad", "compute")
tabulatefusion = pending("npu_bridge.estimator.npu_aicore_ops.tabulatefusion", "compute")
tabulatefusiongrad = pending("npu_bridge.estimator.npu_aicore_ops.tabulatefusiongrad", "compute")

npu_aicore_ops = types.SimpleNamespace(
    fast_gelu=pending("npu_bridge.estimator.npu_aicore_ops.npu_aicore_ops.fast_gelu", "compute"))
