"""Upstream import path for AI Core compute ops (facade); ``npu_aicore_ops.npu_aicore_ops`` is the
generated-op namespace (``fast_gelu``, ``fast_gelu_grad``, ...)."""

from npu_bridge.core.compute import gen_ops as npu_aicore_ops
from npu_bridge.core.compute.activations import fast_gelu_v2, prelu
from npu_bridge.core.compute.dropout import dropout_v3, dropout_v4
from npu_bridge.core.compute.indexing import nonzero
from npu_bridge.core.compute.normalization import centralization, layer_norm
from npu_bridge.core.runtime.unsupported import unsupported

__all__ = [
    "npu_aicore_ops",
    "fast_gelu_v2",
    "prelu",
    "dropout_v3",
    "dropout_v4",
    "nonzero",
    "centralization",
    "layer_norm",
    "lru_cache_v2",
    "nonzerowithvalue",
    "prod_env_mat_a",
    "prodvirialsea",
    "prodforcesea",
    "tabulatefusionsea",
    "tabulatefusionseagrad",
    "tabulatefusion",
    "tabulatefusiongrad",
]

_MODULE = "npu_bridge.estimator.npu_aicore_ops"
lru_cache_v2 = unsupported(f"{_MODULE}.lru_cache_v2", "it manages an embedding cache in NPU device memory")
nonzerowithvalue = unsupported(
    f"{_MODULE}.nonzerowithvalue",
    "its fixed-size, padded output layout is defined by the AI Core kernel; use nonzero and tf.gather_nd",
)
_DEEPMD = (
    "an Ascend port of a DeePMD-kit custom op; off the NPU use DeePMD-kit's own TensorFlow ops, which have "
    "CPU and GPU kernels"
)
prod_env_mat_a = unsupported(f"{_MODULE}.prod_env_mat_a", _DEEPMD)
prodvirialsea = unsupported(f"{_MODULE}.prodvirialsea", _DEEPMD)
prodforcesea = unsupported(f"{_MODULE}.prodforcesea", _DEEPMD)
tabulatefusionsea = unsupported(f"{_MODULE}.tabulatefusionsea", _DEEPMD)
tabulatefusionseagrad = unsupported(f"{_MODULE}.tabulatefusionseagrad", _DEEPMD)
tabulatefusion = unsupported(f"{_MODULE}.tabulatefusion", _DEEPMD)
tabulatefusiongrad = unsupported(f"{_MODULE}.tabulatefusiongrad", _DEEPMD)
