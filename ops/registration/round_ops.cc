// Op registration of NpuRound; the kernels are in ops/kernels/round_kernels.cc.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

REGISTER_OP("NpuRound")
    .Input("x: float")
    .Output("y: float")
    .Attr("to: {half, bfloat16}")
    // Set by the fp16 saturation pass on the simulated Ascend backend: the fp16 value saturates as
    // NpuSaturateFp16 does (and sets the float-status register).
    .Attr("saturate: bool = false")
    .SetIsStateful()  // may write the float-status register; must not be constant-folded or merged
    .SetShapeFn(tensorflow::shape_inference::UnchangedShape)
    .Doc("float32 values rounded to float16 or bfloat16 and back: Ascend's precision cast, in one kernel.");

}  // namespace npu_bridge
