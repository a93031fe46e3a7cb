// Data dump (enable_dump): puts an NpuDump (ops/kernels/dump_kernels.cc) after every computing op of the graph a
// session runs, or only after the ops named in dump_layer (plus the Data inputs of those, as upstream dumps them).
//
// The NpuDump takes the op's name and forwards its outputs (see instrumentation.h), so it runs exactly when
// the op's results are used, fetched or waited for. Ops with reference outputs (TF1 ref-variable updates)
// cannot be forwarded: they get a sink NpuDump that everything reading the op also waits for, and so do
// composed ops (instrumentation.h), whose calls also output intermediates for their backward call.
// Artifacts name ops and tensors as Ascend does: ArtifactOpType, and float32 tensors that hold reduced-precision
// values (LowPrecisionTensors) are written in that type.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ops/runtime/dump_steps.h"
#include "optimizers/graph/instrumentation.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/grappler/utils.h"

namespace npu_bridge {
namespace {

constexpr char kDumpOp[] = "NpuDump";
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

void SetTypes(tensorflow::NodeDef* node, const char* attr, const tensorflow::DataTypeVector& types) {
  auto* list = (*node->mutable_attr())[attr].mutable_list();
  list->Clear();
  for (tensorflow::DataType type : types) list->add_type(tensorflow::BaseType(type));
}

class DumpPass : public RewritePass {
 public:
  std::string name() const override { return "dump"; }

  bool Enabled(const PassOptions& options, const tensorflow::grappler::GrapplerItem& item) const override {
    return options.Get(contract::kDumpEnabled) && !options.Get(contract::kDumpRoot).empty() && IsMainGraph(item);
  }

  absl::Status Run(const PassOptions& options, const tensorflow::grappler::GrapplerItem& item,
                   tensorflow::GraphDef* graph, bool* changed) override {
    Settings settings;
    settings.dump_inputs = options.Get(contract::kDumpInputs);
    settings.dump_outputs = options.Get(contract::kDumpOutputs);
    settings.stats = options.Get(contract::kDumpStats);
    settings.golden = options.Get(contract::kDumpGolden);
    settings.dump_steps = options.Get(contract::kDumpSteps);
    StepSelection checked;  // the NpuDump kernels would reject bad steps one by one; fail once, here
    absl::Status steps = StepSelection::FromPairs(settings.dump_steps, &checked);
    if (!steps.ok()) return steps;
    for (const std::string& name : options.Get(contract::kDumpLayers)) settings.layer.insert(name);
    settings.model = FindOrCreateModel(*graph, options.Get(contract::kDumpRoot));
    settings.base = options.Get(contract::kDumpBase);
    settings.low_precision = LowPrecisionTensors(*graph);
    StampComposedGradients(graph);

    const std::set<std::string> fed = FedNodes(item);
    std::map<std::string, int> index_of;
    for (int i = 0; i < graph->node_size(); ++i) index_of[graph->node(i).name()] = i;
    NameSet names(*graph);
    std::map<std::string, std::string> renamed;         // op -> its renamed source
    std::map<std::string, std::string> readers_wait;    // op with reference outputs -> its sink dump
    std::vector<std::pair<int, std::string>> op_waits;  // (op index, sink dump of one of its Data inputs)
    std::set<std::string> data_dumped;
    const int original_size = graph->node_size();
    for (int n = 0; n < original_size; ++n) {
      const tensorflow::NodeDef node = graph->node(n);  // copy: adding nodes may reallocate
      if (!Dumpable(node) || fed.count(node.name())) continue;
      if (!settings.layer.empty() && !settings.layer.count(OriginalName(node))) continue;
      tensorflow::DataTypeVector input_types, output_types;
      if (!NodeTypes(node, &input_types, &output_types)) continue;  // a function call
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
      // A composed op's call also outputs the intermediates its backward call reads: dumped from a sink.
      bool sink = IsComposedOp(node);
      for (tensorflow::DataType type : output_types) sink |= tensorflow::IsRefType(type);
      (*graph->mutable_node(n)->mutable_attr())[kDumpedAttr].set_b(true);
      tensorflow::NodeDef dump =
          MakeDump(*graph, n, TaskIdOf(graph->mutable_node(n)), settings, index_of, dumps_inputs);
      if (sink) {
        dump.set_name(names.Fresh(name + "/npu_dump"));
        for (int i = 0; i < ArtifactOutputCount(node, output_types.size()); ++i) {
          dump.set_input(i, TensorName(name, i));
        }
        readers_wait[name] = dump.name();
      } else {
        const std::string source = RenameForForwarding(graph, n, kSourceSuffix, &names);
        renamed[name] = source;
        dump.set_name(name);
        SetTypes(&dump, "Tfwd", output_types);
        for (int i = 0; i < static_cast<int>(output_types.size()); ++i) dump.set_input(i, TensorName(source, i));
        dump.add_input("^" + source);  // an op without outputs still runs first
      }
      *graph->add_node() = dump;
      *changed = true;
    }
    AddControlToReaders(graph, readers_wait);
    for (const auto& wait : op_waits) graph->mutable_node(wait.first)->add_input("^" + wait.second);
    RedirectColocation(graph, renamed);
    return absl::OkStatus();
  }

 private:
  static bool Dumpable(const tensorflow::NodeDef& node) {
    return !MovesValues(node.op()) && !IsInstrumentationOp(node.op()) &&
           (!IsStructuralOp(node.op()) || IsComposedOp(node)) && !node.attr().count(kDumpedAttr);
  }

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
    dump.set_op(kDumpOp);
    dump.set_device(CpuDevice(node.device()));
    for (size_t i = 0; i < output_types.size(); ++i) dump.add_input("");
    SetTypes(&dump, "Tout", output_types);
    SetTypes(&dump, "Tfwd", {});
    tensorflow::DataTypeVector dumped_input_types;
    auto& attrs = *dump.mutable_attr();
    auto* written_as = attrs["Tdump"].mutable_list();
    auto write_as = [&](const std::string& tensor, tensorflow::DataType type) {
      const auto parsed = ParseInput(tensor);
      auto low = settings.low_precision.find(TensorName(parsed.first, parsed.second));
      written_as->add_type(low != settings.low_precision.end() && type == tensorflow::DT_FLOAT
                               ? low->second
                               : tensorflow::BaseType(type));
    };
    for (size_t i = 0; i < output_types.size(); ++i) write_as(TensorName(node.name(), i), output_types[i]);
    attrs["ref_inputs"].mutable_list();
    if (dumps_inputs) {
      const std::vector<std::string> inputs = DataInputs(node);
      for (size_t i = 0; i < inputs.size(); ++i) {
        dump.add_input(inputs[i]);
        dumped_input_types.push_back(input_types[i]);
        write_as(inputs[i], input_types[i]);
        if (tensorflow::IsRefType(input_types[i]) || AliasesVariable(graph, index_of, inputs[i])) {
          attrs["ref_inputs"].mutable_list()->add_i(i);
        }
      }
    }
    SetTypes(&dump, "Tin", dumped_input_types);
    const std::vector<std::string> inputs = DataInputs(node);
    bool aliases = false;  // outputs that may be a variable's buffer are copied too
    for (tensorflow::DataType type : output_types) aliases |= tensorflow::IsRefType(type);
    if (ForwardsInput(node.op()) && !inputs.empty()) aliases |= AliasesVariable(graph, index_of, inputs[0]);
    attrs["ref_outputs"].set_b(aliases);
    attrs["op_name"].set_s(OriginalName(node));
    attrs["op_type"].set_s(ArtifactOpType(node));
    attrs["dump_dir"].set_s(settings.model.dir);
    attrs["dump_root"].set_s(settings.base);
    attrs["model_id"].set_i(settings.model.id);
    attrs["task_id"].set_i(task_id);
    auto* steps = attrs["dump_steps"].mutable_list();
    for (int64_t step : settings.dump_steps) steps->add_i(step);
    attrs["dump_outputs"].set_b(settings.dump_outputs);
    attrs["stats"].set_b(settings.stats);
    attrs["golden"].set_b(settings.golden);
    auto format = node.attr().find("data_format");
    if (format != node.attr().end() && format->second.value_case() == tensorflow::AttrValue::kS) {
      attrs["data_format"].set_s(format->second.s());
    }
    return dump;
  }

  // A sink NpuDump of the outputs of graph->node(n), a Data op among dump_layer's inputs.
  static std::string AddSink(tensorflow::GraphDef* graph, int n, const Settings& settings, NameSet* names) {
    Settings outputs_only = settings;
    outputs_only.dump_outputs = true;
    (*graph->mutable_node(n)->mutable_attr())[kDumpedAttr].set_b(true);
    tensorflow::NodeDef dump = MakeDump(*graph, n, TaskIdOf(graph->mutable_node(n)), outputs_only, {}, false);
    const std::string name = graph->node(n).name();
    dump.set_name(names->Fresh(name + "/npu_dump"));
    for (int i = 0; i < dump.input_size(); ++i) dump.set_input(i, TensorName(name, i));
    *graph->add_node() = dump;
    return dump.name();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(400, DumpPass);

}  // namespace npu_bridge
