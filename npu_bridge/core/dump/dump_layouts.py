"""Device layouts of tensors in dumps written by Ascend's runtime, turned back into TensorFlow's layouts.

Dumps written here keep TensorFlow's layout (ND, NHWC, NCHW). A real NPU dump may hold a tensor in a device
format, with the logical shape in ``original_shape``:

  NC1HWC0     (N, C1, H, W, C0), channels split in blocks of C0 (C1 = ceil(C / C0)); back to NCHW, or NHWC
              when ``original_shape`` is NHWC-ordered
  FRACTAL_NZ  (..., N1, M1, M0, N0) for an (..., M, N) matrix: M0 x N0 blocks, block columns outermost

Other device formats are returned as they are, and ``npu-dump compare`` says so.
"""

import numpy as np

from npu_bridge.core.dump import dump_proto

CONVERTIBLE = (dump_proto.FORMAT_NC1HWC0, dump_proto.FORMAT_FRACTAL_NZ)


def to_logical(array, data_format, original_shape):
    """Returns ``array`` in its logical layout.

    Args:
      array: the tensor as stored (its ``shape`` field).
      data_format: the Ascend Format value of the stored tensor.
      original_shape: the logical shape (``original_shape`` field); empty when unknown.
    Returns:
      ``(array, converted)``: the logical array and whether a device format was undone. The array is
      returned unchanged when the format is not a device format or the shapes do not fit it.
    """
    original_shape = tuple(original_shape)
    if data_format == dump_proto.FORMAT_NC1HWC0 and array.ndim == 5 and len(original_shape) == 4:
        return _from_nc1hwc0(array, original_shape)
    if data_format == dump_proto.FORMAT_FRACTAL_NZ and array.ndim >= 4 and len(original_shape) >= 2:
        return _from_fractal_nz(array, original_shape)
    return array, False


def _from_nc1hwc0(array, original_shape):
    n, c1, h, w, c0 = array.shape
    nchw = array.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)
    if original_shape[0] == n and original_shape[2:] == (h, w) and original_shape[1] <= c1 * c0:
        return nchw[:, : original_shape[1]], True
    if original_shape[0] == n and original_shape[1:3] == (h, w) and original_shape[3] <= c1 * c0:
        return nchw[:, : original_shape[3]].transpose(0, 2, 3, 1), True
    return array, False


def _from_fractal_nz(array, original_shape):
    *batch, n1, m1, m0, n0 = array.shape
    m, n = original_shape[-2:]
    if tuple(batch) != tuple(original_shape[:-2]) or m > m1 * m0 or n > n1 * n0:
        return array, False
    rank = len(batch)
    blocks = array.transpose(*range(rank), rank + 1, rank + 2, rank, rank + 3)  # (..., M1, M0, N1, N0)
    matrix = blocks.reshape(*batch, m1 * m0, n1 * n0)
    return np.ascontiguousarray(matrix[..., :m, :n]), True
