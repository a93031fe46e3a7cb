// Inserts an NpuOverflowCheck after every floating-point output of a computing op, so the emulated
// float-status register sees overflows anywhere in the graph, as Ascend's hardware register does.
// Enabled for graphs that read or clear the register (loss scaling's NpuGetFloatStatus & co) and, with
// enable_dump_debug, for every graph a session runs: then the checks also report each overflowing op
// (Opdebug record and a dump of its inputs and outputs, see ops/kernels/overflow_check_kernels.cc).
//
// A checked output's consumers are rewired to read the check's output (an identity that forwards the
// buffer), so the check runs whenever the value is used; a control dependency on a checked node also
// waits for its checks, so e.g. NpuGetFloatStatus ordered after the gradients sees their overflows. When
// reporting, a fetched op is also replaced by name with an IdentityN over its checks (instrumentation.h),
// so an output that is only fetched is checked too.
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "optimizers/graph/instrumentation.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/grappler/utils.h"

namespace npu_bridge {
namespace {

constexpr char kCheckOp[] = "NpuOverflowCheck";

const std::set<std::string>& FloatStatusOps() {
  static const auto* ops = new std::set<std::string>{"NpuAllocFloatStatus", "NpuGetFloatStatus", "NpuClearFloatStatus",
                                                     "NpuGetFloatStatusV2", "NpuClearFloatStatusV2"};
  return *ops;
}

bool IsCheckedType(tensorflow::DataType dtype) {
  return dtype == tensorflow::DT_HALF || dtype == tensorflow::DT_BFLOAT16 || dtype == tensorflow::DT_FLOAT ||
         dtype == tensorflow::DT_DOUBLE;
}

std::string CheckName(const std::string& node, int index) {
  return node + "/npu_overflow_check_" + std::to_string(index);
}

bool Reports(const PassOptions& options, const tensorflow::grappler::GrapplerItem& item) {
  return options.Get(contract::kOverflowCheck) && !options.Get(contract::kDumpRoot).empty() && IsMainGraph(item);
}

class OverflowCheckPass : public RewritePass {
 public:
  std::string name() const override { return "overflow_check"; }

  bool Enabled(const PassOptions& options, const tensorflow::grappler::GrapplerItem& item) const override {
    if (Reports(options, item)) return true;
    for (const auto& node : item.graph.node()) {
      if (FloatStatusOps().count(node.op())) return true;
    }
    return false;
  }

  absl::Status Run(const PassOptions& options, const tensorflow::grappler::GrapplerItem& item,
                   tensorflow::GraphDef* graph, bool* changed) override {
    const bool report = Reports(options, item);
    const bool fp16_saturation = options.Get(contract::kOverflowFp16Saturation);
    const DumpModel model = report ? FindOrCreateModel(*graph, options.Get(contract::kDumpRoot)) : DumpModel();
    const std::string base = options.Get(contract::kDumpBase);
    StampComposedGradients(graph);
    NameSet names(*graph);

    // tensor name ("n" or "n:i") -> check node that replaces it; node -> its checks
    std::unordered_map<std::string, std::string> replacement;
    std::unordered_map<std::string, std::vector<std::string>> checks_of;
    std::map<std::string, tensorflow::DataTypeVector> forwarded;  // fetched op -> its output types
    const std::set<std::string> fetched = report ? FetchedNodes(item) : std::set<std::string>();
    const std::set<std::string> fed = report ? FedNodes(item) : std::set<std::string>();
    const int original_size = graph->node_size();
    for (int n = 0; n < original_size; ++n) {
      const tensorflow::NodeDef node = graph->node(n);  // copy: adding nodes may reallocate
      if (node.input_size() == 0 || MovesValues(node.op()) || FloatStatusOps().count(node.op()) ||
          IsInstrumentationOp(node.op()) || fed.count(node.name())) {  // a fed op does not run
        continue;
      }
      tensorflow::DataTypeVector input_types, output_types;
      if (!NodeTypes(node, &input_types, &output_types)) continue;  // a function
      const std::vector<std::string> inputs = DataInputs(node);
      const int64_t task_id = report ? TaskIdOf(graph->mutable_node(n)) : 0;
      bool checked = false, reference_outputs = false;
      const int checked_outputs = ArtifactOutputCount(node, output_types.size());
      for (int i = 0; i < static_cast<int>(output_types.size()); ++i) {
        reference_outputs |= tensorflow::IsRefType(output_types[i]);
        if (i >= checked_outputs || !IsCheckedType(output_types[i])) continue;  // also skips reference types
        // Named after the user's op, which the dump pass may have renamed.
        const std::string check = CheckName(OriginalName(node), i);
        tensorflow::NodeDef* added = graph->add_node();
        added->set_name(names.Fresh(check));
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
        replacement[TensorName(node.name(), i)] = added->name();
        checks_of[node.name()].push_back(added->name());
        checked = true;
        *changed = true;
      }
      if (checked && fetched.count(node.name()) && !reference_outputs) forwarded[node.name()] = output_types;
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
    ForwardFetched(graph, forwarded, replacement, &names);
    return absl::OkStatus();
  }

 private:
  // Replaces each fetched op by an IdentityN (same name) whose outputs are the op's checked outputs.
  static void ForwardFetched(tensorflow::GraphDef* graph, const std::map<std::string, tensorflow::DataTypeVector>& ops,
                             const std::unordered_map<std::string, std::string>& replacement, NameSet* names) {
    std::map<std::string, std::string> renamed;
    const int original_size = graph->node_size();
    for (int n = 0; n < original_size; ++n) {
      auto op = ops.find(graph->node(n).name());
      if (op == ops.end()) continue;
      const std::string name = op->first;
      const std::string device = graph->node(n).device();
      const std::string source = RenameForForwarding(graph, n, "npu_overflow_source", names);
      renamed[name] = source;
      tensorflow::NodeDef* identity = graph->add_node();
      identity->set_name(name);
      identity->set_op("IdentityN");
      identity->set_device(device);
      auto* types = (*identity->mutable_attr())["T"].mutable_list();
      for (int i = 0; i < static_cast<int>(op->second.size()); ++i) {
        auto check = replacement.find(TensorName(name, i));
        identity->add_input(check != replacement.end() ? check->second : TensorName(source, i));
        types->add_type(op->second[i]);
      }
    }
    if (renamed.empty()) return;
    for (auto& node : *graph->mutable_node()) {  // the checks read the renamed op
      if (node.op() != kCheckOp) continue;
      for (auto& input : *node.mutable_input()) {
        int position = 0;
        auto it = renamed.find(tensorflow::grappler::ParseNodeName(input, &position));
        if (it != renamed.end()) input = TensorName(it->second, position);
      }
    }
    RedirectColocation(graph, renamed);
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(300, OverflowCheckPass);

}  // namespace npu_bridge
