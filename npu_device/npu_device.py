"""Upstream module path ``npu_device.npu_device`` (facade): scripts import ``gen_npu_ops`` and
``global_npu_ctx`` from here."""

from npu_bridge.core.compute.attr_scopes import keep_dtype_scope, npu_recompute_scope
from npu_bridge.core.compute.gen_ops import with_native_ops
from npu_bridge.core.device.device_mode import is_inf_nan_enabled, set_device_sat_mode
from npu_bridge.core.tf2.default_patches import npu_compat_function
from npu_bridge.core.tf2.device import NpuDeviceHandle, global_npu_ctx, open  # noqa: A004
from npu_bridge.core.tf2.global_options import global_options
from npu_bridge.core.tf2.loop_size import set_npu_loop_size
from npu_bridge.core.tf2.run_context import npu_run_context

gen_npu_ops = with_native_ops()

__all__ = [
    "NpuDeviceHandle",
    "gen_npu_ops",
    "global_npu_ctx",
    "global_options",
    "is_inf_nan_enabled",
    "keep_dtype_scope",
    "npu_compat_function",
    "npu_recompute_scope",
    "npu_run_context",
    "open",
    "set_device_sat_mode",
    "set_npu_loop_size",
]
