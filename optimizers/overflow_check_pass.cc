// Inserts an NpuOverflowCheck after every floating-point output of a computing op, so the emulated
// float-status register sees overflows anywhere in the graph, as Ascend's hardware register does.
// Enabled for graphs that read or clear the register (loss scaling's NpuGetFloatStatus & co).
//
// A checked output's consumers are rewired to read the check's output (an identity that forwards the
// buffer), so the check runs whenever the value is used; a control dependency on a checked node also
// waits for its checks, so e.g. NpuGetFloatStatus ordered after the gradients sees their overflows.
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/node_def_util.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_def.pb.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace {

constexpr char kCheckOp[] = "NpuOverflowCheck";

const std::set<std::string>& FloatStatusOps() {
  static const auto* ops = new std::set<std::string>{
      "NpuAllocFloatStatus", "NpuGetFloatStatus", "NpuClearFloatStatus", "NpuGetFloatStatusV2",
      "NpuClearFloatStatusV2"};
  return *ops;
}

// Ops that move or hold values without computing them: an inf there was produced (and caught) upstream.
const std::set<std::string>& NonComputingOps() {
  static const auto* ops = new std::set<std::string>{
      "Const", "Placeholder", "PlaceholderWithDefault", "VariableV2", "VarHandleOp", "ReadVariableOp",
      "Identity", "IdentityN", "Snapshot", "StopGradient", "PreventGradient", "Enter", "RefEnter", "Exit",
      "RefExit", "Switch", "RefSwitch", "Merge", "RefMerge", "NextIteration", "RefNextIteration", "_Recv",
      "_Send", "_HostRecv", "_HostSend", "_Arg", "_Retval", "IteratorGetNext", kCheckOp};
  return *ops;
}

bool IsCheckedType(tensorflow::DataType dtype) {
  return dtype == tensorflow::DT_HALF || dtype == tensorflow::DT_BFLOAT16 || dtype == tensorflow::DT_FLOAT ||
         dtype == tensorflow::DT_DOUBLE;
}

std::string TensorName(const std::string& node, int index) {
  return index == 0 ? node : node + ":" + std::to_string(index);
}

std::string CheckName(const std::string& node, int index) {
  return node + "/npu_overflow_check_" + std::to_string(index);
}

class OverflowCheckPass : public RewritePass {
 public:
  std::string name() const override { return "overflow_check"; }

  bool Enabled(const PassOptions&, const tensorflow::grappler::GrapplerItem& item) const override {
    for (const auto& node : item.graph.node()) {
      if (FloatStatusOps().count(node.op())) return true;
    }
    return false;
  }

  absl::Status Run(const PassOptions&, const tensorflow::grappler::GrapplerItem&, tensorflow::GraphDef* graph,
                   bool* changed) override {
    std::set<std::string> existing;
    for (const auto& node : graph->node()) existing.insert(node.name());

    // tensor name ("n" or "n:i") -> check node that replaces it; node -> its checks
    std::unordered_map<std::string, std::string> replacement;
    std::unordered_map<std::string, std::vector<std::string>> checks_of;
    const int original_size = graph->node_size();
    for (int n = 0; n < original_size; ++n) {
      const tensorflow::NodeDef node = graph->node(n);  // copy: adding nodes may reallocate
      if (node.input_size() == 0 || NonComputingOps().count(node.op()) || FloatStatusOps().count(node.op())) {
        continue;
      }
      const tensorflow::OpDef* op_def = nullptr;
      if (!tensorflow::OpRegistry::Global()->LookUpOpDef(node.op(), &op_def).ok()) continue;  // a function
      tensorflow::DataTypeVector output_types;
      if (!tensorflow::OutputTypesForNode(node, *op_def, &output_types).ok()) continue;
      for (int i = 0; i < static_cast<int>(output_types.size()); ++i) {
        if (!IsCheckedType(output_types[i])) continue;  // also skips reference types
        const std::string check = CheckName(node.name(), i);
        if (existing.count(check)) continue;  // inserted by an earlier Optimize() call
        tensorflow::NodeDef* added = graph->add_node();
        added->set_name(check);
        added->set_op(kCheckOp);
        added->set_device(node.device());
        added->add_input(TensorName(node.name(), i));
        auto& attrs = *added->mutable_attr();
        attrs["T"].set_type(output_types[i]);
        attrs["op_name"].set_s(node.name());
        attrs["op_type"].set_s(node.op());
        attrs["output_index"].set_i(i);
        replacement[TensorName(node.name(), i)] = check;
        checks_of[node.name()].push_back(check);
        existing.insert(check);
        *changed = true;
      }
    }
    if (replacement.empty()) return absl::OkStatus();
    for (auto& node : *graph->mutable_node()) {
      if (node.op() == kCheckOp) continue;
      std::vector<std::string> extra_control;
      for (auto& input : *node.mutable_input()) {
        if (input.empty()) continue;
        if (input[0] == '^') {
          auto checks = checks_of.find(input.substr(1));
          if (checks != checks_of.end()) {
            for (const auto& check : checks->second) extra_control.push_back("^" + check);
          }
          continue;
        }
        std::string name = input;
        if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
        auto it = replacement.find(name);
        if (it != replacement.end()) input = it->second;
      }
      for (const auto& control : extra_control) node.add_input(control);
    }
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(300, OverflowCheckPass);

}  // namespace npu_bridge
