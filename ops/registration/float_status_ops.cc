// Op registration of NpuAllocFloatStatus, NpuGetFloatStatus, NpuClearFloatStatus, NpuGetFloatStatusV2,
// NpuClearFloatStatusV2; the kernels are in ops/kernels/float_status_kernels.cc.
#include "ops/runtime/float_status.h"
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

REGISTER_OP("NpuAllocFloatStatus")
    .Output("data: float")
    .SetIsStateful()
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      c->set_output(0, c->Vector(1));
      return absl::OkStatus();
    });

REGISTER_OP("NpuGetFloatStatus")
    .Input("input_data: float")
    .Output("data: float")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::UnchangedShape);

REGISTER_OP("NpuClearFloatStatus")
    .Input("float_status: float")
    .Output("data: float")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::UnchangedShape);

REGISTER_OP("NpuGetFloatStatusV2")
    .Output("data: int32")
    .SetIsStateful()
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      c->set_output(0, c->Vector(kStatusV2Size));
      return absl::OkStatus();
    });

REGISTER_OP("NpuClearFloatStatusV2").SetIsStateful().SetShapeFn(tensorflow::shape_inference::NoOutputs);

}  // namespace npu_bridge
