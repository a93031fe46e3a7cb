// Inserts an NpuOverflowCheck after every floating-point output of a watched op (Watches(Watcher::kOverflowCheck,
// ...), instrumentation.h), so the emulated float-status register sees overflows anywhere in the graph, as
// Ascend's hardware register does. Enabled for graphs that read or clear the register (loss scaling's
// NpuGetFloatStatus & co) and, with enable_dump_debug, for every graph a session runs: then the checks also report
// each overflowing op (Opdebug record and a dump of its inputs and outputs, see
// ops/kernels/overflow_check_kernels.cc).
//
// The checks follow the op (FollowOps, instrumentation.h): a checked output's readers read the check's output (an
// identity that forwards the buffer), so the check runs whenever the value is used; a control dependency on a
// checked op also waits for its checks, so e.g. NpuGetFloatStatus ordered after the gradients sees their
// overflows, and each read waits for the register's other setters too (OrderStatusReads, status_order.h). When
// reporting, a fetched op is also replaced by name with an IdentityN over its checks, so an output
// that is only fetched is checked too; without reporting (the register alone) checks run only for the values the
// step computes with, so the register does not pick up overflows of values that are only fetched. Reporting
// checks carry the model id in their names (NameInModel), so that no two graphs of a session share their kernels.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "optimizers/graph/instrumentation.h"
#include "optimizers/graph/status_order.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace {

constexpr char kCheckOp[] = "NpuOverflowCheck";

bool IsCheckedType(tensorflow::DataType dtype) {
  return dtype == tensorflow::DT_HALF || dtype == tensorflow::DT_BFLOAT16 || dtype == tensorflow::DT_FLOAT ||
         dtype == tensorflow::DT_DOUBLE;
}

std::string CheckName(const std::string& node, int index) {
  return node + "/npu_overflow_check_" + std::to_string(index);
}

bool Reports(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item) {
  return plan.Get(contract::kOverflowCheck) && !plan.Get(contract::kDumpRoot).empty() &&
         IsMainGraph(item, plan.Get(contract::kFunctionGraphs));
}

class OverflowCheckPass : public RewritePass {
 public:
  std::string name() const override { return "overflow_check"; }

  bool Enabled(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item) const override {
    if (Reports(plan, item)) return true;
    for (const auto& node : item.graph.node()) {
      if (IsFloatStatusOp(node.op())) return true;
    }
    return false;
  }

  absl::Status Run(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item, tensorflow::GraphDef* graph,
                   bool* changed) override {
    const bool report = Reports(plan, item);
    const bool fp16_saturation = plan.Get(contract::kOverflowFp16Saturation);
    const DumpModel model = report ? FindOrCreateModel(*graph, plan.Get(contract::kDumpRoot)) : DumpModel();
    const std::string base = plan.Get(contract::kDumpBase);
    StampComposedGradients(graph);
    NameSet names(*graph);

    std::map<std::string, Followers> checks;  // op -> its checks, by output index
    const std::set<std::string> fed = FedNodes(item);
    const int original_size = graph->node_size();
    for (int n = 0; n < original_size; ++n) {
      const tensorflow::NodeDef node = graph->node(n);  // copy: adding nodes may reallocate
      if (!Watches(Watcher::kOverflowCheck, node, fed)) continue;
      tensorflow::DataTypeVector input_types, output_types;
      NodeTypes(node, &input_types, &output_types);
      const std::vector<std::string> inputs = DataInputs(node);
      const int64_t task_id = report ? TaskIdOf(graph->mutable_node(n)) : 0;
      const int checked_outputs = ArtifactOutputCount(node, output_types.size());
      for (int i = 0; i < checked_outputs; ++i) {
        if (!IsCheckedType(output_types[i])) continue;  // also skips reference types
        // Named after the user's op, which the dump pass may have renamed.
        const std::string check = CheckName(OriginalName(node), i);
        tensorflow::NodeDef* added = graph->add_node();
        added->set_name(NameInModel(check, model, &names));
        added->set_op(kCheckOp);
        added->set_device(node.device());
        added->add_input(TensorName(node.name(), i));
        auto& attrs = *added->mutable_attr();
        attrs["T"].set_type(output_types[i]);
        attrs["op_name"].set_s(OriginalName(node));
        attrs["op_type"].set_s(ArtifactOpType(node));
        attrs["output_index"].set_i(i);
        if (report) {
          auto* io_types = attrs["Tio"].mutable_list();
          for (size_t k = 0; k < inputs.size(); ++k) {
            added->add_input(inputs[k]);
            io_types->add_type(tensorflow::BaseType(input_types[k]));
          }
          for (int k = 0; k < checked_outputs; ++k) {
            added->add_input(TensorName(node.name(), k));
            io_types->add_type(tensorflow::BaseType(output_types[k]));
          }
          attrs["report"].set_b(true);
          attrs["fp16_saturation"].set_b(fp16_saturation && output_types[i] == tensorflow::DT_HALF);
          attrs["num_op_inputs"].set_i(inputs.size());
          attrs["dump_dir"].set_s(model.dir);
          attrs["dump_root"].set_s(base);
          attrs["model_id"].set_i(model.id);
          attrs["task_id"].set_i(task_id);
        }
        checks[node.name()].replacements[i] = added->name();
        *changed = true;
      }
    }
    FollowOps(graph, checks, report, FetchedNodes(item), "npu_overflow_source", &names);
    // Runs after the precision (200) and fp16 saturation (250) passes, so every op that sets the register is here.
    if (OrderStatusReads(IsFunctionBody(item, plan.Get(contract::kFunctionGraphs)), graph)) *changed = true;
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(300, OverflowCheckPass);

}  // namespace npu_bridge
