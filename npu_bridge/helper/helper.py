"""Upstream import path ``npu_bridge.helper.helper`` (facade).

Upstream scripts and upstream's own loss scaling reach the NPU ops through ``helper.get_gen_ops()``, its
generated op module: ``gen_npu_ops.npu_alloc_float_status()``, ``npu_get_float_status_v2()``,
``drop_out_gen_mask(...)``, ... (see ``npu_bridge.core.compute.gen_ops``).
"""

from npu_bridge.core.compute.gen_ops import with_native_ops as get_gen_ops

__all__ = ["get_gen_ops"]
