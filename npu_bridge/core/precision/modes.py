"""What each Ascend precision mode means here.

Ascend's fusion engine puts every op in a precision class; the observable effect is on the cube ops (matrix
multiplications and convolutions), which multiply fp16 values and accumulate in fp32, and on mixed precision,
which runs an allow-listed region in fp16. Modes map onto four behaviours:

  cube fp16          allow_fp32_to_fp16: cube ops take fp16 inputs and give fp16 outputs (the output is
                     rounded to fp16; consumers keep float32).
  cube fp16->fp32    cube_fp16in_fp32out, force_fp32 (v1 and v2): fp16 inputs, float32 output.
  all fp16           force_fp16, v2 fp16: every computing op reads and writes fp16-rounded values.
  mixed              allow_mix_precision(_fp16|_bf16), mixed_float16, mixed_bfloat16: the white-listed ops
                     and the gray ops they feed compute in fp16 (bf16), black-listed ops keep float32
                     (``mixlist``).
  unchanged          must_keep_origin_dtype, origin, and allow_fp32_to_bf16 (which only lowers ops that
                     have no fp32 implementation; every op here has one).

Unset: the simulated Ascend backend behaves like Atlas training chips (allow_fp32_to_fp16); CPU and GPU
compute as the graph says.
"""

import dataclasses
from typing import Optional

from npu_bridge.core.runtime.errors import OptionValueError

# Ascend's cube ops as TensorFlow op types: forward ops and their backprops.
CUBE_OPS = (
    "MatMul",
    "BatchMatMul",
    "BatchMatMulV2",
    "BatchMatMulV3",
    "Einsum",
    "Conv2D",
    "Conv2DBackpropInput",
    "Conv2DBackpropFilter",
    "Conv3D",
    "Conv3DBackpropInput",
    "Conv3DBackpropFilter",
    "Conv3DBackpropInputV2",
    "Conv3DBackpropFilterV2",
    "DepthwiseConv2dNative",
    "DepthwiseConv2dNativeBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter",
)

CUBE_FP16 = "cube_fp16"
CUBE_FP16_IN_FP32_OUT = "cube_fp16in_fp32out"
ALL_FP16 = "all_fp16"
MIXED = "mixed"
UNCHANGED = "unchanged"

ASCEND_DEFAULT_MODE = "allow_fp32_to_fp16"

_BEHAVIOUR = {
    "allow_fp32_to_fp16": (CUBE_FP16, None),
    "cube_fp16in_fp32out": (CUBE_FP16_IN_FP32_OUT, None),
    "force_fp32": (CUBE_FP16_IN_FP32_OUT, None),
    "force_fp16": (ALL_FP16, None),
    "fp16": (ALL_FP16, None),
    "allow_mix_precision": (MIXED, "float16"),
    "allow_mix_precision_fp16": (MIXED, "float16"),
    "mixed_float16": (MIXED, "float16"),
    "allow_mix_precision_bf16": (MIXED, "bfloat16"),
    "mixed_bfloat16": (MIXED, "bfloat16"),
    "must_keep_origin_dtype": (UNCHANGED, None),
    "origin": (UNCHANGED, None),
    "allow_fp32_to_bf16": (UNCHANGED, None),
}

_DESCRIPTION = {
    CUBE_FP16: "cube ops (MatMul, Conv2D, ... and their backprops) take fp16 inputs with fp32 accumulation "
    "and give fp16 outputs",
    CUBE_FP16_IN_FP32_OUT: "cube ops (MatMul, Conv2D, ... and their backprops) take fp16 inputs with fp32 "
    "accumulation and give float32 outputs",
    ALL_FP16: "every computing op reads and writes fp16 values (cube ops accumulate in fp32)",
    UNCHANGED: "ops compute in the dtypes of the graph",
}

# Modes whose spelling Ascend accepts but which need hardware that has no counterpart here.
UNSUPPORTED_MODES = {
    "cube_hif8": "HiFloat8 cube computation exists only on Ascend 950 chips",
    "mixed_hif8": "HiFloat8 mixed precision exists only on Ascend 950 chips",
}


@dataclasses.dataclass(frozen=True)
class PrecisionPolicy:
    """The precision a session computes with.

    Attributes:
      mode: the precision mode in force (v1 or v2 spelling).
      source: where it came from: "precision_mode", "precision_mode_v2" or "the simulated Ascend backend's
        default"; "" when nothing was set and nothing changes.
      behaviour: CUBE_FP16, CUBE_FP16_IN_FP32_OUT, ALL_FP16, MIXED or UNCHANGED.
      mixed_dtype: "float16" or "bfloat16" for MIXED, else None.
    """

    mode: str
    source: str
    behaviour: str
    mixed_dtype: Optional[str] = None

    def describe(self):
        """One line for logs: the mode, where it came from and what it does."""
        if self.behaviour == MIXED:
            effect = (
                f"white-listed ops (MatMul, Conv2D, ...) and the gray ops they feed compute in {self.mixed_dtype}, "
                "black-listed ops (losses, exp/log, reductions, normalization statistics) keep float32"
            )
        else:
            effect = _DESCRIPTION[self.behaviour]
        origin = f" ({self.source})" if self.source else ""
        return f"precision mode {self.mode or 'unset'}{origin}: {effect}"


def policy(options, backend):
    """Returns the ``PrecisionPolicy`` of a session.

    Args:
      options: the session's validated ``NpuOptions``.
      backend: "cpu", "gpu" or "ascend".
    Returns:
      The policy; unset modes follow the backend's default.
    """
    if options.get("precision_mode") is not None:
        mode, source = options.get("precision_mode"), "precision_mode"
    elif options.get("precision_mode_v2") is not None:
        mode, source = options.get("precision_mode_v2"), "precision_mode_v2"
    elif backend == "ascend":
        mode, source = ASCEND_DEFAULT_MODE, "the simulated Ascend backend's default"
    else:
        return PrecisionPolicy(mode="", source="", behaviour=UNCHANGED)
    behaviour, mixed_dtype = _BEHAVIOUR[mode]
    return PrecisionPolicy(mode=mode, source=source, behaviour=behaviour, mixed_dtype=mixed_dtype)


def mode_check(accepted, detail):
    """Returns the option check of a precision mode: upstream's allow-list, then what works here.

    Args:
      accepted: the values upstream accepts.
      detail: upstream's message for a value outside ``accepted``.
    Returns:
      A check(value) -> value raising ValueError for values outside ``accepted`` and for the HiFloat8 modes
      (they need Ascend 950 hardware).
    """

    def check(mode):
        if mode not in accepted:
            raise OptionValueError(detail)
        if mode in UNSUPPORTED_MODES:
            raise OptionValueError(
                f"{UNSUPPORTED_MODES[mode]}; there is no HiFloat8 type off the NPU, so npu_bridge "
                "does not support it (nor does Ascend's software on other chips)"
            )
        return mode

    return check
