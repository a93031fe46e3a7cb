// Op registration of NpuExceptionCapture, NpuExceptionRelease; the kernels are in
// ops/kernels/exception_capture_kernels.cc.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

REGISTER_OP("NpuExceptionCapture")
    .Input("op_inputs: T")
    .Attr("T: list(type) >= 1")
    .Attr("slot: string")
    .Attr("op_name: string")
    .Attr("op_type: string")
    .Attr("dump_dir: string")
    .Attr("dump_root: string = ''")  // the exception dump base, as NpuDump's
    .Attr("task_id: int")
    .Attr("data_format: string = ''")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::NoOutputs)
    .Doc("Holds an op's inputs until NpuExceptionRelease runs, so they can be dumped if the op fails.");

REGISTER_OP("NpuExceptionRelease")
    .Attr("slot: string")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::NoOutputs)
    .Doc("Drops the inputs NpuExceptionCapture holds for an op that completed.");

}  // namespace npu_bridge
