// Exception dump (enable_exception_dump=1): every op of the graph a session runs that it watches
// (Watches(Watcher::kExceptionCapture, ...), instrumentation.h) and that has data inputs is bracketed with
// NpuExceptionCapture (holds the op's inputs; the op waits for it) and NpuExceptionRelease (drops them once the op
// has run). The release follows the op
// (FollowOps): whatever reads or waits for the op waits for it, and an op the run fetches (or a stateful op, see
// instrumentation.h) runs as "{name}/npu_exception_source" behind a forwarder that waits for it. Its slot,
// "{session id}/{node name}", names the node as it runs, which is the name TensorFlow's error gives; the capture
// and release carry the graph's model id in their names (NameInModel), so that the graphs of a session do not
// share their kernels, which hold the slot. See ops/kernels/exception_capture_kernels.cc.
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

  bool Enabled(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item) const override {
    return plan.Get(contract::kExceptionDump) && !plan.Get(contract::kExceptionDir).empty() &&
           IsMainGraph(item, plan.Get(contract::kFunctionGraphs));
  }

  absl::Status Run(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item, tensorflow::GraphDef* graph,
                   bool* changed) override {
    const std::set<std::string> fed = FedNodes(item);  // a fed op does not run
    const std::set<std::string> fetched = FetchedNodes(item);
    const std::string slot_prefix = std::to_string(plan.Get(contract::kSessionId)) + "/";
    const std::string dir = plan.Get(contract::kExceptionDir);
    const std::string base = plan.Get(contract::kExceptionBase);
    StampComposedGradients(graph);
    const DumpModel model = FindOrCreateModel(*graph, "");  // the graph's id, for the names of the nodes
    NameSet names(*graph);
    std::map<std::string, Followers> releases;
    std::map<std::string, std::vector<int>> brackets;  // op -> its capture and release (node indices)
    const int original_size = graph->node_size();
    for (int n = 0; n < original_size; ++n) {
      const tensorflow::NodeDef node = graph->node(n);  // copy: adding nodes may reallocate
      if (!Watches(Watcher::kExceptionCapture, node, fed)) continue;
      const std::vector<std::string> inputs = DataInputs(node);
      if (inputs.empty()) continue;  // nothing to hold
      tensorflow::DataTypeVector input_types, output_types;
      NodeTypes(node, &input_types, &output_types);
      const std::string slot = slot_prefix + node.name();

      tensorflow::NodeDef* capture = graph->add_node();
      capture->set_name(NameInModel(node.name() + "/npu_exception_capture", model, &names));
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
      release->set_name(NameInModel(node.name() + "/npu_exception_release", model, &names));
      release->set_op("NpuExceptionRelease");
      release->set_device(CpuDevice(node.device()));
      release->add_input("^" + node.name());
      (*release->mutable_attr())["slot"].set_s(slot);
      releases[node.name()].waits.push_back(release->name());
      brackets[node.name()] = {graph->node_size() - 2, graph->node_size() - 1};

      graph->mutable_node(n)->add_input(capture_ref);
      *changed = true;
    }
    for (const auto& [op, runs_as] : FollowOps(graph, releases, true, fetched, "npu_exception_source", &names)) {
      for (int index : brackets[op]) (*graph->mutable_node(index)->mutable_attr())["slot"].set_s(slot_prefix + runs_as);
    }
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(450, ExceptionCapturePass);

}  // namespace npu_bridge
