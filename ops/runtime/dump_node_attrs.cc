#include "ops/runtime/dump_node_attrs.h"

#include "tensorflow/core/framework/attr_value.pb.h"
#include "tensorflow/core/platform/errors.h"

namespace npu_bridge {

namespace dump_node {

std::string AttrSpec(const char* name, const char* type) { return std::string(name) + ": " + type; }

}  // namespace dump_node

namespace {

void SetTypes(tensorflow::AttrValue* attr, const tensorflow::DataTypeVector& types) {
  auto* list = attr->mutable_list();
  list->Clear();
  for (tensorflow::DataType type : types) list->add_type(tensorflow::BaseType(type));
}

}  // namespace

absl::Status ReadDumpNodeAttrs(const tensorflow::AttrSlice& node, DumpNodeAttrs* attrs) {
  using tensorflow::GetNodeAttr;
  namespace n = dump_node;
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kOutputTypes, &attrs->output_types));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kInputTypes, &attrs->input_types));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kForwardedTypes, &attrs->forwarded_types));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kOpName, &attrs->op_name));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kOpType, &attrs->op_type));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kDumpDir, &attrs->dump_dir));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kDumpRoot, &attrs->dump_root));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kModelId, &attrs->model_id));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kTaskId, &attrs->task_id));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kDumpSteps, &attrs->dump_steps));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kDumpOutputs, &attrs->dump_outputs));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kDataFormat, &attrs->data_format));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kRefInputs, &attrs->ref_inputs));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kRefOutputs, &attrs->ref_outputs));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kWrittenAsTypes, &attrs->written_as));
  if (!attrs->written_as.empty() &&
      attrs->written_as.size() != attrs->output_types.size() + attrs->input_types.size()) {
    return tensorflow::errors::InvalidArgument("NpuDump: Tdump must be empty or name every dumped tensor");
  }
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kStats, &attrs->stats));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kGolden, &attrs->golden));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kStepsPerRun, &attrs->steps_per_run));
  TF_RETURN_IF_ERROR(GetNodeAttr(node, n::kInIterationsLoop, &attrs->in_iterations_loop));
  if (!attrs->forwarded_types.empty() && attrs->forwarded_types != attrs->output_types) {
    return tensorflow::errors::InvalidArgument("NpuDump: Tfwd must be empty or equal to Tout");
  }
  return absl::OkStatus();
}

void WriteDumpNodeAttrs(const DumpNodeAttrs& attrs, tensorflow::NodeDef* node) {
  namespace n = dump_node;
  auto& out = *node->mutable_attr();
  SetTypes(&out[n::kOutputTypes], attrs.output_types);
  SetTypes(&out[n::kInputTypes], attrs.input_types);
  SetTypes(&out[n::kForwardedTypes], attrs.forwarded_types);
  SetTypes(&out[n::kWrittenAsTypes], attrs.written_as);
  out[n::kOpName].set_s(attrs.op_name);
  out[n::kOpType].set_s(attrs.op_type);
  out[n::kDumpDir].set_s(attrs.dump_dir);
  out[n::kDumpRoot].set_s(attrs.dump_root);
  out[n::kModelId].set_i(attrs.model_id);
  out[n::kTaskId].set_i(attrs.task_id);
  auto* steps = out[n::kDumpSteps].mutable_list();
  steps->Clear();
  for (int64_t step : attrs.dump_steps) steps->add_i(step);
  out[n::kDumpOutputs].set_b(attrs.dump_outputs);
  if (!attrs.data_format.empty()) out[n::kDataFormat].set_s(attrs.data_format);
  auto* ref_inputs = out[n::kRefInputs].mutable_list();
  ref_inputs->Clear();
  for (int32_t index : attrs.ref_inputs) ref_inputs->add_i(index);
  out[n::kRefOutputs].set_b(attrs.ref_outputs);
  out[n::kStats].set_b(attrs.stats);
  out[n::kGolden].set_b(attrs.golden);
}

}  // namespace npu_bridge
