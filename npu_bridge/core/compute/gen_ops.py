"""Upstream's generated-op style names (``gen_npu_ops.drop_out_gen_mask`` & co) for the compute ops.

Upstream scripts reach NPU ops through its generated op module, ``npu_bridge.helper.helper.get_gen_ops()``,
and through the ``npu_unary_ops.npu_unary_ops`` / ``npu_aicore_ops.npu_aicore_ops`` modules. This module is
the Python part of those: ops built from TensorFlow ops. The ops of the C++ library (float status, system)
come from ``native_library.ops()``; ``with_native_ops()`` gives both in one namespace.
"""

import sys

import tensorflow as tf

from npu_bridge.core.compute import activations, dropout, fused_adam, indexing, lars, lstm_cell, normalization
from npu_bridge.core.runtime import native_library


# The wrappers take upstream's generated argument order: scripts with a copied npu_ops.py call them positionally.
def drop_out_gen_mask(shape, prob, seed=0, seed2=0, name=None):
    """DropOutGenMask: a uint8 mask, 1 with probability ``prob``."""
    return dropout.gen_mask(shape, prob, seed, seed2, name=name)


drop_out_gen_mask_v3 = drop_out_gen_mask
drop_out_do_mask = dropout.do_mask
drop_out_do_mask_v3 = dropout.do_mask


def drop_out_gen_mask_v4(shape, prob, seed=0, seed2=0, dtype=tf.bool, name=None):
    """DropOutGenMaskV4: a bool (default) or uint8 mask."""
    return dropout.gen_mask(shape, prob, seed, seed2, mask_dtype=dtype, name=name)


gelu = activations.gelu
gelu_grad = activations.gelu_grad
fast_gelu = activations.fast_gelu
fast_gelu_grad = activations.fast_gelu_grad
fast_gelu_v2 = activations.fast_gelu_v2
p_relu = activations.prelu
layer_norm = normalization.layer_norm
centralization = normalization.centralization
scatter_elements = indexing.scatter_elements
non_zero = indexing.nonzero
k_means_centroids = indexing.k_means_centroids
lars_v2 = lars.lars_v2
basic_lstm_cell = lstm_cell.basic_lstm_cell
adam_apply_one_assign = fused_adam.adam_apply_one_assign
adam_apply_one_with_decay_assign = fused_adam.adam_apply_one_with_decay_assign


class _WithNativeOps:
    """Attribute lookup over this module, then the C++ library's op module."""

    def __getattr__(self, name):
        this = sys.modules[__name__]
        return getattr(this, name) if hasattr(this, name) else getattr(native_library.ops(), name)

    def __dir__(self):
        return sorted(set(dir(sys.modules[__name__])) | set(dir(native_library.ops())))


_WITH_NATIVE_OPS = _WithNativeOps()


def with_native_ops():
    """Returns upstream's generated op module: these compute ops and the C++ library's ops (float status, ...)."""
    return _WITH_NATIVE_OPS
