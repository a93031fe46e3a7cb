// Op registration of NpuLoopIteration; the kernel is in ops/kernels/loop_iteration_kernels.cc.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

REGISTER_OP("NpuLoopIteration")
    .Input("iteration: int32")  // the loop counter: 0 in the first iteration
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::NoOutputs)
    .Doc("Marks the start of an iterations_per_loop iteration: records the iteration for its run's step numbers.");

}  // namespace npu_bridge
