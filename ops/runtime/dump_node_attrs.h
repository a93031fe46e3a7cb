// The attributes of NpuDump, the node the dump pass (optimizers/passes/dump_pass.cc) puts after every dumped op.
// Their names are declared here once, for the op's registration (ops/registration/dump_ops.cc, which also gives
// their types and defaults), the pass, which writes them (WriteDumpNodeAttrs), and the kernel
// (ops/kernels/dump_kernels.cc), which reads them (ReadDumpNodeAttrs).
#ifndef NPU_BRIDGE_OPS_RUNTIME_DUMP_NODE_ATTRS_H_
#define NPU_BRIDGE_OPS_RUNTIME_DUMP_NODE_ATTRS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ops/runtime/iterations_loop.h"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tensorflow/core/framework/node_def_util.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace dump_node {

constexpr char kOp[] = "NpuDump";
constexpr char kOutputTypes[] = "Tout";
constexpr char kInputTypes[] = "Tin";
constexpr char kForwardedTypes[] = "Tfwd";
constexpr char kOpName[] = "op_name";
constexpr char kOpType[] = "op_type";
constexpr char kDumpDir[] = "dump_dir";
constexpr char kDumpRoot[] = "dump_root";
constexpr char kModelId[] = "model_id";
constexpr char kTaskId[] = "task_id";
constexpr char kDumpSteps[] = "dump_steps";
constexpr char kDumpOutputs[] = "dump_outputs";
constexpr char kDataFormat[] = "data_format";
constexpr char kRefInputs[] = "ref_inputs";
constexpr char kRefOutputs[] = "ref_outputs";
constexpr char kWrittenAsTypes[] = "Tdump";
constexpr char kStats[] = "stats";
constexpr char kGolden[] = "golden";
// The iterations_per_loop pass sets these two (ops/runtime/iterations_loop.h), on NpuOverflowCheck too.
constexpr const char* kStepsPerRun = kStepsPerRunAttr;
constexpr const char* kInIterationsLoop = kInLoopAttr;

// "{name}: {type and default}", an attr spec of REGISTER_OP.
std::string AttrSpec(const char* name, const char* type);

}  // namespace dump_node

// The values of an NpuDump's attributes (what each means: ops/registration/dump_ops.cc).
struct DumpNodeAttrs {
  tensorflow::DataTypeVector output_types, input_types, forwarded_types, written_as;
  std::string op_name, op_type, dump_dir, dump_root, data_format;
  int64_t model_id = 0, task_id = 0;
  std::vector<int64_t> dump_steps;
  bool dump_outputs = true;
  std::vector<int32_t> ref_inputs;
  bool ref_outputs = false, stats = false, golden = true;
  int64_t steps_per_run = 1;
  bool in_iterations_loop = false;
};

// Reads every attribute of a node whose defaults are filled in (a kernel's), and checks that Tfwd and Tdump fit
// Tout and Tin.
absl::Status ReadDumpNodeAttrs(const tensorflow::AttrSlice& node, DumpNodeAttrs* attrs);

// Sets the attributes the dump pass decides on `node`: every one but the iterations_per_loop pass's two
// (steps_per_run, in_iterations_loop); data_format only when it is not empty.
void WriteDumpNodeAttrs(const DumpNodeAttrs& attrs, tensorflow::NodeDef* node);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_DUMP_NODE_ATTRS_H_
