// Op registration of NpuDump; the kernels are in ops/kernels/dump_kernels.cc.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

REGISTER_OP("NpuDump")
    .Input("op_outputs: Tout")
    .Input("op_inputs: Tin")
    .Output("forwarded: Tfwd")
    .Attr("Tout: list(type) >= 0")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tfwd: list(type) >= 0")  // Tout to forward the op's outputs, empty for a sink
    .Attr("op_name: string")
    .Attr("op_type: string")
    .Attr("dump_dir: string")  // {dump root}/{model name}/{model id}; the step is appended
    // The directory the user named (dump_path): directories below it are created by the writer or refused
    // unless they are real directories of this user. Empty: dump_dir itself.
    .Attr("dump_root: string = ''")
    .Attr("model_id: int")
    .Attr("task_id: int")
    .Attr("dump_steps: list(int) = []")  // first, last pairs of the steps to dump; empty: every step
    .Attr("dump_outputs: bool = true")
    .Attr("data_format: string = ''")
    // Inputs (by index) and outputs that may share a TF1 reference variable's buffer, which can change in
    // place before the writer gets to them: copied before queueing.
    .Attr("ref_inputs: list(int) = []")
    .Attr("ref_outputs: bool = false")
    // The types the op's outputs, then its inputs, are written as (empty: their own). A float32 tensor that
    // holds float16 / bfloat16 values (the precision pass's rounding) is written in that type, as on Ascend.
    .Attr("Tdump: list(type) = []")
    .Attr("stats: bool = false")
    .Attr("golden: bool = true")
    // Set by the iterations_per_loop pass (optimizers/iterations_loop.h): steps per run, and whether the node
    // runs once per loop iteration (its step is the run's first step plus the iteration).
    .Attr("steps_per_run: int = 1")
    .Attr("in_iterations_loop: bool = false")
    .SetIsStateful()
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
      return absl::OkStatus();
    })
    .Doc("Forwards an op's outputs and dumps its inputs/outputs in Ascend's format in selected steps.");

}  // namespace npu_bridge
