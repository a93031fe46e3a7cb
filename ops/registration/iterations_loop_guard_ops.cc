// Op registration of NpuIterationsLoopGuard; the kernels are in ops/kernels/iterations_loop_guard_kernels.cc.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

REGISTER_OP("NpuIterationsLoopGuard")
    .Attr("message: string")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::NoOutputs)
    .Doc("Fails with `message`: the IterationOp it guards ran without an iterations_per_loop loop.");

}  // namespace npu_bridge
