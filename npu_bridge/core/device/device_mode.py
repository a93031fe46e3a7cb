"""fp16 overflow mode of the simulated Ascend device: upstream's ``npu_plugin.set_device_sat_mode`` and
``is_inf_nan_enabled``.

Saturation mode (0; the only mode of Atlas training chips and the simulated backend's default) turns an fp16
overflow into +-65504 and sets the float-status register; INF/NaN mode (1) gives inf, as IEEE arithmetic
does. The mode is process-wide, held by the C++ library (ops/runtime/device_mode.cc) and read by the simulated
backend's fp16 kernels when they run. CPU and GPU backends always compute with IEEE INF/NaN behaviour.
"""

from npu_bridge.core.device import device_target
from npu_bridge.core.runtime import log, native_library
from npu_bridge.core.runtime.errors import NpuArgumentError

SATURATION = 0
INF_NAN = 1
UNSET = -1


def set_device_sat_mode(mode):
    """Sets the fp16 overflow mode; call it before running the network (and before building loss scaling,
    whose overflow detection depends on it).

    Args:
      mode: 0 saturation, 1 INF/NaN.
    Raises:
      ValueError: ``mode`` is not 0 or 1.
    """
    if isinstance(mode, bool) or mode not in (SATURATION, INF_NAN):
        raise NpuArgumentError(f"set_device_sat_mode: mode must be 0 (saturation) or 1 (INF/NaN), got {mode!r}")
    native_library.c_api().npu_bridge_set_overflow_mode(int(mode))
    if device_target.process_target() != "ascend":
        log.info_once(
            ("sat-mode-off-ascend", mode),
            "set_device_sat_mode(%d): the overflow mode applies to the "
            "simulated Ascend backend (device_target=ascend); this process computes on %s with IEEE "
            "INF/NaN behaviour",
            mode,
            device_target.process_target(),
        )


def overflow_mode():
    """Returns the mode set by ``set_device_sat_mode``: 0, 1, or -1 when never set."""
    return int(native_library.c_api().npu_bridge_overflow_mode())


def is_inf_nan_enabled():
    """Tells whether overflows produce inf/NaN in this process.

    Returns:
      False only on the simulated Ascend backend in saturation mode (its default); True on CPU and GPU and in
      INF/NaN mode.
    """
    return device_target.process_target() != "ascend" or overflow_mode() == INF_NAN


def reset():
    """Forgets the mode set by ``set_device_sat_mode`` (the backend's default applies again)."""
    native_library.c_api().npu_bridge_set_overflow_mode(UNSET)
