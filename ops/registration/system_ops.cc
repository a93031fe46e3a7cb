// Op registration of NPUInit, NPUShutdown; the kernels are in ops/kernels/system_kernels.cc.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

REGISTER_OP("NPUInit")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::NoOutputs)
    .Doc("Initializes the NPU system for this process (idempotent).");

REGISTER_OP("NPUShutdown")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::NoOutputs)
    .Doc("Shuts the NPU system down unless it was initialized globally by npu_resource_init.");

}  // namespace npu_bridge
