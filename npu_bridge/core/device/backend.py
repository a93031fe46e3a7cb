"""The backend a bridged session computes on, applied to its config.

``device_target`` (or NPU_BRIDGE_DEVICE_TARGET, see ``npu_bridge.core.device.device_target``) chooses it:
  cpu     TensorFlow's CPU kernels; GPUs are hidden from the session.
  gpu     TensorFlow's GPU kernels; there must be a GPU.
  ascend  the simulated Ascend backend: CPU kernels with Ascend's numerics -- its default precision mode
          (allow_fp32_to_fp16), fp16 saturation mode and float-status register, and its implementation modes.
"""

from npu_bridge.core.device import device_target
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuOptionError


def configure(plan):
    """Checks a session's backend (resolved once in ``plan.backend``) and restricts its devices accordingly.

    Args:
      plan: the ``SessionPlan`` (its config is edited).
    Returns:
      "cpu", "gpu" or "ascend".
    Raises:
      NpuOptionError: the backend is gpu but TensorFlow sees no GPU.
    """
    import tensorflow as tf

    target = plan.backend
    has_gpu = bool(tf.config.list_physical_devices("GPU"))
    if target == "gpu" and not has_gpu:
        key = "device_target" if plan.options.is_set("device_target") else device_target.ENV_VARIABLE
        raise NpuOptionError(
            key,
            "gpu",
            "auto / cpu / gpu / ascend",
            "TensorFlow sees no GPU in this process (install a GPU build of TensorFlow 2.21 "
            "and check CUDA_VISIBLE_DEVICES), so the gpu backend cannot run",
        )
    if target != "gpu" and has_gpu:
        plan.config.device_count["GPU"] = 0
    log.info_once(("backend", target), "npu_bridge backend: %s", describe(target))
    return target


def describe(target):
    """One line saying what a backend is."""
    return {
        "cpu": "cpu (TensorFlow CPU kernels)",
        "gpu": "gpu (TensorFlow GPU kernels)",
        "ascend": "ascend (the simulated Ascend backend: CPU kernels with Ascend's numerics)",
    }[target]
