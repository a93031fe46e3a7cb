// Op registration of NpuOverflowCheck; the kernels are in ops/kernels/overflow_check_kernels.cc.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

REGISTER_OP("NpuOverflowCheck")
    .Input("x: T")
    .Input("op_io: Tio")  // report mode: the op's inputs, then all its outputs
    .Output("y: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("Tio: list(type) >= 0 = []")
    .Attr("op_name: string")
    .Attr("op_type: string")
    .Attr("output_index: int")
    .Attr("report: bool = false")
    .Attr("fp16_saturation: bool = false")
    .Attr("num_op_inputs: int = 0")
    .Attr("dump_dir: string = ''")   // {dump root}/{model name}/{model id}
    .Attr("dump_root: string = ''")  // dump_path, as NpuDump's
    .Attr("model_id: int = 0")
    .Attr("task_id: int = 0")
    .Attr("steps_per_run: int = 1")  // iterations_per_loop pass: as NpuDump's
    .Attr("in_iterations_loop: bool = false")
    // Stateful: a check that only a float-status read waits for (a control edge) has no data output in use, and
    // Grappler's dependency optimizer would turn a stateless node like that into a NoOp.
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::UnchangedShape)
    .Doc("Identity that raises the emulated float-status register when x holds inf or NaN.");

}  // namespace npu_bridge
