// Op registration of NpuDump; the kernels are in ops/kernels/dump_kernels.cc, the attribute names in
// ops/runtime/dump_node_attrs.h.
#include "ops/runtime/dump_node_attrs.h"
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

using dump_node::AttrSpec;

REGISTER_OP(dump_node::kOp)
    .Input("op_outputs: Tout")
    .Input("op_inputs: Tin")
    .Output("forwarded: Tfwd")
    .Attr(AttrSpec(dump_node::kOutputTypes, "list(type) >= 0"))
    .Attr(AttrSpec(dump_node::kInputTypes, "list(type) >= 0"))
    .Attr(AttrSpec(dump_node::kForwardedTypes, "list(type) >= 0"))  // Tout to forward the outputs, empty: a sink
    .Attr(AttrSpec(dump_node::kOpName, "string"))
    .Attr(AttrSpec(dump_node::kOpType, "string"))
    .Attr(AttrSpec(dump_node::kDumpDir, "string"))  // {dump root}/{model name}/{model id}; the step is appended
    // The directory the user named (dump_path): directories below it are created by the writer or refused
    // unless they are real directories of this user. Empty: dump_dir itself.
    .Attr(AttrSpec(dump_node::kDumpRoot, "string = ''"))
    .Attr(AttrSpec(dump_node::kModelId, "int"))
    .Attr(AttrSpec(dump_node::kTaskId, "int"))
    // first, last pairs of the steps to dump; empty: every step
    .Attr(AttrSpec(dump_node::kDumpSteps, "list(int) = []"))
    .Attr(AttrSpec(dump_node::kDumpOutputs, "bool = true"))
    .Attr(AttrSpec(dump_node::kDataFormat, "string = ''"))
    // Inputs (by index) and outputs that may share a TF1 reference variable's buffer, which can change in
    // place before the writer gets to them: copied before queueing.
    .Attr(AttrSpec(dump_node::kRefInputs, "list(int) = []"))
    .Attr(AttrSpec(dump_node::kRefOutputs, "bool = false"))
    // The types the op's outputs, then its inputs, are written as (empty: their own). A float32 tensor that
    // holds float16 / bfloat16 values (the precision pass's rounding) is written in that type, as on Ascend.
    .Attr(AttrSpec(dump_node::kWrittenAsTypes, "list(type) = []"))
    .Attr(AttrSpec(dump_node::kStats, "bool = false"))
    .Attr(AttrSpec(dump_node::kGolden, "bool = true"))
    // Set by the iterations_per_loop pass (ops/runtime/iterations_loop.h): steps per run, and whether the node
    // runs once per loop iteration (its step is the run's first step plus the iteration).
    .Attr(AttrSpec(dump_node::kStepsPerRun, "int = 1"))
    .Attr(AttrSpec(dump_node::kInIterationsLoop, "bool = false"))
    .SetIsStateful()
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
      return absl::OkStatus();
    })
    .Doc("Forwards an op's outputs and dumps its inputs/outputs in Ascend's format in selected steps.");

}  // namespace npu_bridge
