// Op registration of NpuSaturateFp16; the kernels are in ops/kernels/fp16_saturation_kernels.cc.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

REGISTER_OP("NpuSaturateFp16")
    .Input("x: half")
    .Output("y: half")
    .SetIsStateful()  // writes the float-status register; must not be constant-folded or merged
    .SetShapeFn(tensorflow::shape_inference::UnchangedShape)
    .Doc("Saturates inf to +-65504 in saturation mode, as the simulated Ascend device's fp16 arithmetic does.");

}  // namespace npu_bridge
