"""Hands the precision decisions to the C++ rewrite passes through the session's NpuOptimizer entry.

The key names and formats are defined in optimizers/precision_keys.h; these constants must match it.
"""

from npu_bridge.core.session import config_proto

RULES_KEY = "_npu_precision_rules"
AMP_DTYPE_KEY = "_npu_precision_amp_dtype"
ASCEND_FP16_KEY = "_npu_precision_ascend_fp16"
IMPL_MODES_KEY = "_npu_precision_impl_modes"


def write(config, rules=None, amp_dtype=None, ascend_fp16=False, impl_modes=()):
    """Adds the precision parameters to the (single, normalized) NpuOptimizer entry of ``config``.

    Args:
      config: the session's ConfigProto copy.
      rules: rounding rule lines ``selector|inputs|outputs``; an empty list still enables the precision pass
        (for _keep_dtype ops in a mixed region), None leaves it off.
      amp_dtype: "bfloat16" to round TensorFlow's AMP region through bfloat16, else None.
      ascend_fp16: True on the simulated Ascend backend (saturating fp16 conversions).
      impl_modes: implementation-mode lines ``selector=mode``.
    """
    entry = next(e for e in config.graph_options.rewrite_options.custom_optimizers
                 if e.name == config_proto.NPU_OPTIMIZER)
    params = entry.parameter_map
    if rules is not None:
        params[RULES_KEY].s = "\n".join(rules).encode("utf-8")
    if amp_dtype:
        params[AMP_DTYPE_KEY].s = amp_dtype.encode("utf-8")
    if ascend_fp16:
        params[ASCEND_FP16_KEY].b = True
    if impl_modes:
        params[IMPL_MODES_KEY].s = "\n".join(impl_modes).encode("utf-8")
