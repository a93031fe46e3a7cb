// Exception dump (enable_exception_dump=1): brackets every computing op of the graph a session runs with
// NpuExceptionCapture (holds the op's inputs; the op waits for it) and NpuExceptionRelease (drops them once
// the op has run; whatever reads the op waits for it). See ops/kernels/exception_capture_kernels.cc.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "optimizers/graph/instrumentation.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace {

class ExceptionCapturePass : public RewritePass {
 public:
  std::string name() const override { return "exception_capture"; }

  bool Enabled(const PassOptions& options, const tensorflow::grappler::GrapplerItem& item) const override {
    return options.Get(contract::kExceptionDump) && !options.Get(contract::kExceptionDir).empty() && IsMainGraph(item);
  }

  absl::Status Run(const PassOptions& options, const tensorflow::grappler::GrapplerItem& item,
                   tensorflow::GraphDef* graph, bool* changed) override {
    const std::set<std::string> fed = FedNodes(item);  // a fed op does not run
    const std::string slot_prefix = std::to_string(options.Get(contract::kSessionId)) + "/";
    const std::string dir = options.Get(contract::kExceptionDir);
    const std::string base = options.Get(contract::kExceptionBase);
    StampComposedGradients(graph);
    NameSet names(*graph);
    std::map<std::string, std::string> release_of;
    const int original_size = graph->node_size();
    for (int n = 0; n < original_size; ++n) {
      const tensorflow::NodeDef node = graph->node(n);  // copy: adding nodes may reallocate
      if (MovesValues(node.op()) || IsInstrumentationOp(node.op()) ||
          (IsStructuralOp(node.op()) && !IsComposedOp(node)) || fed.count(node.name())) {
        continue;
      }
      const std::vector<std::string> inputs = DataInputs(node);
      const std::string capture_name = node.name() + "/npu_exception_capture";
      if (inputs.empty()) continue;  // nothing to hold
      tensorflow::DataTypeVector input_types, output_types;
      if (!NodeTypes(node, &input_types, &output_types)) continue;  // a function call
      const std::string slot = slot_prefix + node.name();

      tensorflow::NodeDef* capture = graph->add_node();
      capture->set_name(names.Fresh(capture_name));
      capture->set_op("NpuExceptionCapture");
      capture->set_device(CpuDevice(node.device()));
      auto& attrs = *capture->mutable_attr();
      for (size_t i = 0; i < inputs.size(); ++i) {
        capture->add_input(inputs[i]);
        attrs["T"].mutable_list()->add_type(tensorflow::BaseType(input_types[i]));
      }
      attrs["slot"].set_s(slot);
      attrs["op_name"].set_s(OriginalName(node));
      attrs["op_type"].set_s(ArtifactOpType(node));
      attrs["dump_dir"].set_s(dir);
      attrs["dump_root"].set_s(base);
      attrs["task_id"].set_i(TaskIdOf(graph->mutable_node(n)));
      auto format = node.attr().find("data_format");
      if (format != node.attr().end() && format->second.value_case() == tensorflow::AttrValue::kS) {
        attrs["data_format"].set_s(format->second.s());
      }
      const std::string capture_ref = "^" + capture->name();

      tensorflow::NodeDef* release = graph->add_node();
      release->set_name(names.Fresh(node.name() + "/npu_exception_release"));
      release->set_op("NpuExceptionRelease");
      release->set_device(CpuDevice(node.device()));
      release->add_input("^" + node.name());
      (*release->mutable_attr())["slot"].set_s(slot);
      release_of[node.name()] = release->name();

      graph->mutable_node(n)->add_input(capture_ref);
      *changed = true;
    }
    AddControlToReaders(graph, release_of);
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(450, ExceptionCapturePass);

}  // namespace npu_bridge
