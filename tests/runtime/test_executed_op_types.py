"""The op types of executed graphs mapped back to the user's: oneDNN kernels, merged and fused ops."""

import pytest
from tensorflow.core.framework import op_def_pb2
from tensorflow.python.client import pywrap_tf_session
from tensorflow.python.framework import op_def_registry

from npu_bridge.core.runtime.executed_op_types import user_op_type

pytestmark = pytest.mark.op_types

# Op types seen in the step stats of training graphs run here (oneDNN on or off, remapping on or off).
SEEN_HERE = [
    ("_MklMatMul", "MatMul"),
    ("_MklBatchMatMulV2", "BatchMatMulV2"),
    ("_MklSoftmax", "Softmax"),
    ("_MklSwish", "Swish"),  # the remapper's fusion of x * sigmoid(x): no op of its own
    ("_MklNativeConv2D", "Conv2D"),
    ("_MklNativeConv2DWithBias", "Conv2D"),  # Conv2D + BiasAdd, merged by the layout pass
    ("_MklNativeConv2DBackpropFilter", "Conv2DBackpropFilter"),
    ("_MklNativeConv2DBackpropInput", "Conv2DBackpropInput"),
    ("_MklNativeConv3D", "Conv3D"),
    ("_MklNativeConv3DBackpropFilterV2", "Conv3DBackpropFilterV2"),
    ("_MklNativeConv3DBackpropInputV2", "Conv3DBackpropInputV2"),
    ("_MklNativeDepthwiseConv2dNative", "DepthwiseConv2dNative"),
    ("_MklNativeDepthwiseConv2dNativeBackpropFilter", "DepthwiseConv2dNativeBackpropFilter"),
    ("_MklNativeDepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropInput"),
    ("_MklNativeFusedBatchNormV3", "FusedBatchNormV3"),
    ("_MklNativeFusedBatchNormGradV3", "FusedBatchNormGradV3"),
    ("_MklNativeFusedBatchNormEx", "FusedBatchNormV3"),
    ("_MklNativeFusedConv2D", "Conv2D"),
    ("_MklNativeFusedConv3D", "Conv3D"),
    ("_MklNativeFusedDepthwiseConv2dNative", "DepthwiseConv2dNative"),
    ("_MklNativeFusedMatMul", "MatMul"),
    ("_MklNativeMaxPool", "MaxPool"),
    ("_MklNativeMaxPoolGrad", "MaxPoolGrad"),
    ("_MklNativeMaxPool3D", "MaxPool3D"),
    ("_MklNativeMaxPool3DGrad", "MaxPool3DGrad"),
    ("_FusedConv2D", "Conv2D"),
    ("_FusedMatMul", "MatMul"),
]

# Kernels of the registry this machine did not run: other merges, the remapper's extended ops, quantized ops.
FROM_THE_REGISTRY = [
    ("_MklNativePadWithConv2D", "Conv2D"),  # not Pad: Pad's inputs do not begin the kernel's
    ("_MklNativePadWithFusedConv2D", "Conv2D"),
    ("_MklNativeConv2DBackpropFilterWithBias", "Conv2DBackpropFilter"),
    ("_MklFusedBatchMatMulV2", "BatchMatMulV2"),
    ("_MklFusedMatMul", "MatMul"),
    ("_MklLayerNorm", "LayerNorm"),
    ("_MklQuantizedConv2DWithBiasAndRelu", "QuantizedConv2DWithBiasAndRelu"),
    ("_MklQuantizeV2", "QuantizeV2"),
    ("_FusedBatchNormEx", "FusedBatchNormV3"),
    ("_FusedBatchNormGradEx", "FusedBatchNormGradV3"),
    ("_FusedDepthwiseConv2dNative", "DepthwiseConv2dNative"),
]

UNCHANGED = [
    "MatMul",
    "Conv2D",
    "FusedBatchNormV3",
    "FusedPadConv2D",
    "Cast",
    "CollectiveReduceV2",
    "NpuSaturateFp16",
    "_UnaryOpsComposition",
    "_Arg",
    "_Retval",
    "_Send",
    "_Recv",
    "unknown",
]


@pytest.mark.parametrize("executed, expected", SEEN_HERE + FROM_THE_REGISTRY)
def test_kernels_map_to_the_op_the_user_wrote(executed, expected):
    assert user_op_type(executed) == expected


@pytest.mark.parametrize("op_type", UNCHANGED)
def test_other_op_types_pass_through(op_type):
    assert user_op_type(op_type) == op_type


def test_every_registered_kernel_maps_to_a_name_without_a_kernel_prefix():
    ops = op_def_pb2.OpList.FromString(pywrap_tf_session.TF_GetBuffer(pywrap_tf_session.TF_GetAllOpList()))
    kernels = [op.name for op in ops.op if op.name.startswith(("_Mkl", "__Mkl", "_Fused"))]
    assert len(kernels) > 50
    for kernel in kernels:
        mapped = user_op_type(kernel)
        assert not mapped.startswith("_"), kernel
        if op_def_registry.get(mapped) is None:  # only fusions with no op of their own
            assert kernel in ("_MklLayerNorm", "_MklSwish", "_MklFusedMish", "_MklFusedInstanceNorm"), kernel
