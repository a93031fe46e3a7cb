"""Estimated Ascend 910 duration of an op: a roofline model, used when the backend is the simulated Ascend.

    estimated time = max(FLOPs / peak compute, bytes moved / HBM bandwidth)

* FLOPs: matrix ("cube") ops count 2 x multiply-adds from their shapes (MatMul and BatchMatMul:
  2*M*N*K; convolutions and their backprops: 2 x output elements x filter elements per output channel);
  every other op counts one operation per element of its largest side (inputs or outputs).
* Bytes: every input and output tensor once. A cube op that Ascend computes in 16 bit moves its float32
  tensors as 16-bit values.
* Which precision: cube ops run in fp16 unless the precision mode keeps the original dtype
  (``must_keep_origin_dtype``, ``precision_mode_v2=origin``); other ops keep their dtype unless the mode is
  ``force_fp16`` / ``fp16``. Unset is Ascend 910's training default, ``allow_fp32_to_fp16``.
* Not modelled: task launch overhead, pipelining between ops, data layout conversions, collectives.

Constants (``ASCEND_910``) -- none of them comes from upstream's documentation:
  * cube fp16 peak 256 TFLOPS: Huawei's published Ascend 910 figure.
  * cube fp32: the 910's cube unit has no fp32 mode; fp32 matrix work is modelled at the vector fp32 rate
    (assumption).
  * vector peak 8.2 TFLOPS fp16 / 4.1 TFLOPS fp32: assumption (32 AI cores x 1 GHz x a 2048-bit vector unit,
    a multiply-add counted as 2).
  * HBM bandwidth 1.2 TB/s: assumption (the commonly quoted figure for the 910's four HBM2 stacks).
"""

import dataclasses
import math

ASCEND_910 = {
    "cube_fp16_flops": 256e12,
    "vector_fp16_flops": 8.192e12,
    "vector_fp32_flops": 4.096e12,
    "hbm_bytes_per_second": 1.2e12,
}
_KEEP_ORIGIN = ("must_keep_origin_dtype", "origin")
_FORCE_FP16 = ("force_fp16", "fp16")
_SIXTEEN_BIT = ("FLOAT16", "BF16")
DTYPE_BYTES = {
    "FLOAT": 4,
    "FLOAT16": 2,
    "BF16": 2,
    "DOUBLE": 8,
    "INT8": 1,
    "UINT8": 1,
    "BOOL": 1,
    "INT16": 2,
    "UINT16": 2,
    "INT32": 4,
    "UINT32": 4,
    "INT64": 8,
    "UINT64": 8,
    "COMPLEX64": 8,
    "COMPLEX128": 16,
    "QINT8": 1,
    "QUINT8": 1,
    "QINT32": 4,
}
_MATMUL = ("MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
_CONV_FORWARD = ("Conv2D", "Conv3D", "DepthwiseConv2dNative")
_CONV_INPUT_GRAD = ("Conv2DBackpropInput", "Conv3DBackpropInputV2", "DepthwiseConv2dNativeBackpropInput")
_CONV_FILTER_GRAD = ("Conv2DBackpropFilter", "Conv3DBackpropFilterV2", "DepthwiseConv2dNativeBackpropFilter")


@dataclasses.dataclass(frozen=True)
class Estimate:
    """The roofline estimate of one op execution.

    Attributes:
      microseconds: estimated Ascend 910 duration.
      flops: floating-point operations counted.
      bytes: bytes moved counted.
      bound: "compute" or "memory", whichever limits.
    """

    microseconds: float
    flops: float
    bytes: float
    bound: str


class PrecisionPolicy:
    """Which precision the simulated Ascend computes cube and vector ops in.

    Args:
      precision_mode: the ``precision_mode`` option or None.
      precision_mode_v2: the ``precision_mode_v2`` option or None.
    """

    def __init__(self, precision_mode=None, precision_mode_v2=None):
        modes = (precision_mode, precision_mode_v2)
        self.cube_16bit = not any(mode in _KEEP_ORIGIN for mode in modes)
        self.vector_16bit = any(mode in _FORCE_FP16 for mode in modes)


def is_cube(op_type):
    """True for the matrix ops that run on Ascend's cube unit."""
    return op_type in _MATMUL or op_type in _CONV_FORWARD or op_type in _CONV_INPUT_GRAD or op_type in _CONV_FILTER_GRAD


def estimate(op_type, inputs, outputs, policy):
    """Estimates the Ascend 910 duration of one op execution.

    Args:
      op_type: the op type of the user's graph (fused kernels map to their op: ``executed_op_types``).
      inputs, outputs: sequences of (dtype name, shape tuple or None when unknown).
      policy: a ``PrecisionPolicy``.
    Returns:
      An ``Estimate``.
    """
    peaks = ASCEND_910
    cube_flops = _cube_flops(op_type, inputs, outputs) if is_cube(op_type) else None
    if cube_flops is not None:
        sixteen = policy.cube_16bit or _dtype(inputs) in _SIXTEEN_BIT
        flops = cube_flops
        peak = peaks["cube_fp16_flops"] if sixteen else peaks["vector_fp32_flops"]
        moved = _bytes(inputs, sixteen) + _bytes(outputs, sixteen)
    else:
        sixteen = policy.vector_16bit or _dtype(outputs or inputs) in _SIXTEEN_BIT
        flops = float(max(_elements(inputs), _elements(outputs)))
        peak = peaks["vector_fp16_flops"] if sixteen else peaks["vector_fp32_flops"]
        moved = _bytes(inputs, sixteen) + _bytes(outputs, sixteen)
    compute_s, memory_s = flops / peak, moved / peaks["hbm_bytes_per_second"]
    return Estimate(max(compute_s, memory_s) * 1e6, flops, moved, "compute" if compute_s >= memory_s else "memory")


def _cube_flops(op_type, inputs, outputs):
    """2 x multiply-adds of a matrix op, or None when the shapes it needs are unknown."""
    out = outputs[0][1] if outputs else None
    if op_type in _MATMUL:
        a = inputs[0][1] if inputs else None
        if not out or not a or len(out) < 2 or len(a) < 2:
            return None
        k = a[-1] if a[-2] == out[-2] else a[-2]
        return 2.0 * math.prod(out) * k
    if op_type in _CONV_FILTER_GRAD:
        grad = inputs[2][1] if len(inputs) > 2 else None
        return None if not grad or not out else 2.0 * math.prod(grad) * _per_output(op_type, out)
    filt = inputs[1][1] if len(inputs) > 1 else None
    produced = inputs[2][1] if op_type in _CONV_INPUT_GRAD and len(inputs) > 2 else out
    return None if not filt or not produced else 2.0 * math.prod(produced) * _per_output(op_type, filt)


def _per_output(op_type, filter_shape):
    """Multiply-adds per output element for a filter of ``filter_shape`` (HWIO / DHWIO / depthwise HWIM)."""
    if op_type.startswith("Depthwise"):
        return math.prod(filter_shape[:-2])
    return math.prod(filter_shape[:-1])


def _dtype(tensors):
    return tensors[0][0] if tensors else ""


def _elements(tensors):
    return sum(math.prod(shape) for _, shape in tensors if shape is not None)


def _bytes(tensors, sixteen):
    total = 0
    for dtype, shape in tensors:
        if shape is None:
            continue
        size = DTYPE_BYTES.get(dtype, 0)
        if sixteen and dtype == "FLOAT":
            size = 2
        total += math.prod(shape) * size
    return float(total)
