"""Upstream import path ``npu_bridge.helper.helper`` (facade).

Upstream scripts and upstream's own loss scaling reach the NPU ops through ``helper.get_gen_ops()``, its
generated op module: ``gen_npu_ops.npu_alloc_float_status()``, ``npu_get_float_status_v2()``,
``drop_out_gen_mask(...)``, ... Here it gives the ops of the C++ library (float status, system) together with
the compute ops built from TensorFlow ops (``npu_bridge.compute.gen_ops``).
"""

from npu_bridge import native_library
from npu_bridge.compute import gen_ops as _compute_ops


class _GenOps:
    """Attribute lookup over the compute ops, then the C++ library's op module."""

    def __getattr__(self, name):
        if hasattr(_compute_ops, name):
            return getattr(_compute_ops, name)
        return getattr(native_library.ops(), name)

    def __dir__(self):
        return sorted(set(dir(_compute_ops)) | set(dir(native_library.ops())))


_gen_ops = _GenOps()


def get_gen_ops():
    """Returns the generated-op module of NPU ops (see the module docstring)."""
    return _gen_ops
