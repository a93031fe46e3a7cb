// Data dump (enable_dump): puts an NpuDump (ops/kernels/dump_kernels.cc) after every computing op of the graph a
// session runs, or only after the ops named in dump_layer (plus the Data inputs of those, as upstream dumps them).
//
// Which ops: Watches(Watcher::kDump, ...) (instrumentation.h). The NpuDump follows the op (FollowOps,
// instrumentation.h): it forwards the op's outputs and the op's readers read them, so it runs exactly when the
// op's results are used or waited for, and an op the run fetches is replaced by name with a forwarder of the
// NpuDump's outputs. Ops with reference outputs (TF1 ref-variable updates) cannot be forwarded, and composed ops
// (instrumentation.h) are not, since their calls also output intermediates for their backward call: their
// NpuDump is a sink that everything reading, waiting for or fetching the op also waits for. The NpuDump's name
// carries the model id (NameInModel): TensorFlow would otherwise give the NpuDumps of one op in two graphs of a
// session one kernel, with the model, steps and task id of the first.
// Artifacts name ops and tensors as Ascend does: ArtifactOpType, and float32 tensors that hold reduced-precision
// values (LowPrecisionTensors) are written in that type.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ops/runtime/dump_node_attrs.h"
#include "optimizers/graph/instrumentation.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/grappler/utils.h"

namespace npu_bridge {
namespace {

constexpr char kSourceSuffix[] = "npu_dump_source";
constexpr char kDumpedAttr[] = "_npu_dumped";  // on ops this pass instrumented: it runs again on its output

const std::set<std::string>& DataOps() {
  static const auto* ops = new std::set<std::string>{"Placeholder", "PlaceholderWithDefault"};
  return *ops;
}

struct Settings {
  bool dump_inputs = false;
  bool dump_outputs = true;
  bool stats = false;
  bool golden = true;
  std::vector<int64_t> dump_steps;                            // first, last pairs; empty: every step
  std::map<std::string, tensorflow::DataType> low_precision;  // LowPrecisionTensors of the graph
  std::set<std::string> layer;                                // empty: every op
  DumpModel model;
  std::string base;  // dump_path: the root of the directories the writer verifies
};

class DumpPass : public RewritePass {
 public:
  std::string name() const override { return "dump"; }

  bool Enabled(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item) const override {
    return plan.Get(contract::kDumpEnabled) && !plan.Get(contract::kDumpRoot).empty() &&
           IsMainGraph(item, plan.Get(contract::kFunctionGraphs));
  }

  absl::Status Run(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item, tensorflow::GraphDef* graph,
                   bool* changed) override {
    Settings settings;
    settings.dump_inputs = plan.Get(contract::kDumpInputs);
    settings.dump_outputs = plan.Get(contract::kDumpOutputs);
    settings.stats = plan.Get(contract::kDumpStats);
    settings.golden = plan.Get(contract::kDumpGolden);
    // Python validated dump_step (options/checks.py); the NpuDump kernels check the pairs they are built with.
    settings.dump_steps = plan.Get(contract::kDumpSteps);
    for (const std::string& name : plan.Get(contract::kDumpLayers)) settings.layer.insert(name);
    settings.model = FindOrCreateModel(*graph, plan.Get(contract::kDumpRoot));
    settings.base = plan.Get(contract::kDumpBase);
    settings.low_precision = LowPrecisionTensors(*graph);
    StampComposedGradients(graph);

    const std::set<std::string> fed = FedNodes(item);
    const std::set<std::string> fetched = FetchedNodes(item);
    std::map<std::string, int> index_of;
    for (int i = 0; i < graph->node_size(); ++i) index_of[graph->node(i).name()] = i;
    NameSet names(*graph);
    std::map<std::string, Followers> followers;         // op -> its dump
    std::vector<std::pair<int, std::string>> op_waits;  // (op index, sink dump of one of its Data inputs)
    std::set<std::string> data_dumped;
    const int original_size = graph->node_size();
    for (int n = 0; n < original_size; ++n) {
      const tensorflow::NodeDef node = graph->node(n);  // copy: adding nodes may reallocate
      if (!Watches(Watcher::kDump, node, fed) || node.attr().count(kDumpedAttr)) continue;
      if (!settings.layer.empty() && !settings.layer.count(OriginalName(node))) continue;
      tensorflow::DataTypeVector input_types, output_types;
      NodeTypes(node, &input_types, &output_types);
      const std::vector<std::string> inputs = DataInputs(node);
      const bool dumps_outputs = settings.dump_outputs && !output_types.empty();
      const bool dumps_inputs = settings.dump_inputs && !inputs.empty();
      if (!dumps_outputs && !dumps_inputs) continue;
      if (!settings.layer.empty()) {
        for (const std::string& input : inputs) {
          const std::string producer = ParseInput(input).first;
          auto it = index_of.find(producer);
          if (it != index_of.end() && DataOps().count(graph->node(it->second).op()) &&
              !graph->node(it->second).attr().count(kDumpedAttr) && data_dumped.insert(producer).second) {
            op_waits.push_back({n, AddSink(graph, it->second, settings, &names)});
          }
        }
      }
      const std::string& name = node.name();
      (*graph->mutable_node(n)->mutable_attr())[kDumpedAttr].set_b(true);
      tensorflow::NodeDef dump =
          MakeDump(*graph, n, TaskIdOf(graph->mutable_node(n)), settings, index_of, dumps_inputs);
      dump.set_name(NameInModel(name + "/npu_dump", settings.model, &names));
      const int shown = ArtifactOutputCount(node, output_types.size());
      for (int i = 0; i < shown; ++i) dump.set_input(i, TensorName(name, i));
      if (shown == 0) dump.add_input("^" + name);  // an op without outputs still runs first
      // The NpuDump forwards the op's outputs, which its readers then read. Not those of a composed op's call (it
      // also outputs the intermediates its backward call reads, which the dump does not show), nor reference
      // outputs: whatever reads or waits for such an op, or an op without outputs, waits for the dump instead.
      bool forwards = !IsComposedOp(node) && shown > 0;
      for (tensorflow::DataType type : output_types) forwards &= !tensorflow::IsRefType(type);
      Followers& follow = followers[name];
      if (forwards) {
        auto* forwarded = (*dump.mutable_attr())[dump_node::kForwardedTypes].mutable_list();
        for (tensorflow::DataType type : output_types) forwarded->add_type(tensorflow::BaseType(type));
        for (int i = 0; i < shown; ++i) follow.replacements[i] = TensorName(dump.name(), i);
      } else {
        follow.waits.push_back(dump.name());
      }
      *graph->add_node() = dump;
      *changed = true;
    }
    for (const auto& wait : op_waits) graph->mutable_node(wait.first)->add_input("^" + wait.second);
    FollowOps(graph, followers, true, fetched, kSourceSuffix, &names);
    return absl::OkStatus();
  }

 private:
  // An NpuDump of graph.node(n) whose first inputs are placeholders for the op's outputs (the caller sets
  // them), followed by the op's data inputs when `dumps_inputs`.
  static tensorflow::NodeDef MakeDump(const tensorflow::GraphDef& graph, int n, int64_t task_id,
                                      const Settings& settings, const std::map<std::string, int>& index_of,
                                      bool dumps_inputs) {
    const tensorflow::NodeDef& node = graph.node(n);
    tensorflow::DataTypeVector input_types, output_types;
    NodeTypes(node, &input_types, &output_types);
    output_types.resize(ArtifactOutputCount(node, output_types.size()));
    tensorflow::NodeDef dump;
    dump.set_op(dump_node::kOp);
    dump.set_device(CpuDevice(node.device()));
    for (size_t i = 0; i < output_types.size(); ++i) dump.add_input("");
    DumpNodeAttrs attrs;
    attrs.output_types = output_types;  // Tfwd stays empty here: the caller sets it when the dump forwards them
    auto write_as = [&](const std::string& tensor, tensorflow::DataType type) {
      const auto parsed = ParseInput(tensor);
      auto low = settings.low_precision.find(TensorName(parsed.first, parsed.second));
      attrs.written_as.push_back(low != settings.low_precision.end() && type == tensorflow::DT_FLOAT
                                     ? low->second
                                     : tensorflow::BaseType(type));
    };
    for (size_t i = 0; i < output_types.size(); ++i) write_as(TensorName(node.name(), i), output_types[i]);
    if (dumps_inputs) {
      const std::vector<std::string> inputs = DataInputs(node);
      for (size_t i = 0; i < inputs.size(); ++i) {
        dump.add_input(inputs[i]);
        attrs.input_types.push_back(input_types[i]);
        write_as(inputs[i], input_types[i]);
        if (tensorflow::IsRefType(input_types[i]) || AliasesVariable(graph, index_of, inputs[i])) {
          attrs.ref_inputs.push_back(static_cast<int32_t>(i));
        }
      }
    }
    const std::vector<std::string> inputs = DataInputs(node);
    bool aliases = false;  // outputs that may be a variable's buffer are copied too
    for (tensorflow::DataType type : output_types) aliases |= tensorflow::IsRefType(type);
    if (ForwardsInput(node.op()) && !inputs.empty()) aliases |= AliasesVariable(graph, index_of, inputs[0]);
    attrs.ref_outputs = aliases;
    attrs.op_name = OriginalName(node);
    attrs.op_type = ArtifactOpType(node);
    attrs.dump_dir = settings.model.dir;
    attrs.dump_root = settings.base;
    attrs.model_id = settings.model.id;
    attrs.task_id = task_id;
    attrs.dump_steps = settings.dump_steps;
    attrs.dump_outputs = settings.dump_outputs;
    attrs.stats = settings.stats;
    attrs.golden = settings.golden;
    auto format = node.attr().find("data_format");
    if (format != node.attr().end() && format->second.value_case() == tensorflow::AttrValue::kS) {
      attrs.data_format = format->second.s();
    }
    WriteDumpNodeAttrs(attrs, &dump);
    return dump;
  }

  // A sink NpuDump of the outputs of graph->node(n), a Data op among dump_layer's inputs.
  static std::string AddSink(tensorflow::GraphDef* graph, int n, const Settings& settings, NameSet* names) {
    Settings outputs_only = settings;
    outputs_only.dump_outputs = true;
    (*graph->mutable_node(n)->mutable_attr())[kDumpedAttr].set_b(true);
    tensorflow::NodeDef dump = MakeDump(*graph, n, TaskIdOf(graph->mutable_node(n)), outputs_only, {}, false);
    const std::string name = graph->node(n).name();
    dump.set_name(NameInModel(name + "/npu_dump", settings.model, names));
    for (int i = 0; i < dump.input_size(); ++i) dump.set_input(i, TensorName(name, i));
    *graph->add_node() = dump;
    return dump.name();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(400, DumpPass);

}  // namespace npu_bridge
