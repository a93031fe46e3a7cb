// The `NpuOptimizer` Grappler custom graph optimizer. TF instantiates it for every session whose
// ConfigProto lists a custom optimizer of that name, hands it the parameter_map (Init) and calls Optimize on
// the graph it is about to execute. It runs the registered rewrite passes (rewrite_pass.h); with no pass
// enabled it reports "nothing to do" and TF keeps the graph as it was.
//
// Grappler's meta-optimizer calls Optimize once per iteration (two by default). The passes rewrite a graph
// once: every node a pass adds (or renames) is stamped with kRewrittenByAttr, and a graph that carries the
// stamp is left alone, so the second iteration cannot stack one pass's work on another's.
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "ops/runtime/no_throw.h"
#include "ops/runtime/system_state.h"
#include "optimizers/pass_contract.h"
#include "optimizers/pass_plan.h"
#include "optimizers/pass_stats.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/grappler/grappler_item.h"
#include "tensorflow/core/grappler/optimizers/custom_graph_optimizer.h"
#include "tensorflow/core/grappler/optimizers/custom_graph_optimizer_registry.h"

namespace npu_bridge {
namespace {

// Names the pass that added a node to the executed graph.
constexpr char kRewrittenByAttr[] = "_npu_rewritten_by";

bool RewrittenAlready(const tensorflow::GraphDef& graph) {
  for (const tensorflow::NodeDef& node : graph.node()) {
    if (node.attr().count(kRewrittenByAttr)) return true;
  }
  return false;
}

std::unordered_set<std::string> NodeNames(const tensorflow::GraphDef& graph) {
  std::unordered_set<std::string> names;
  for (const tensorflow::NodeDef& node : graph.node()) names.insert(node.name());
  return names;
}

// Stamps the nodes of `graph` whose names are not in `before` as added by `pass`.
void StampAddedNodes(const std::unordered_set<std::string>& before, const std::string& pass,
                     tensorflow::GraphDef* graph) {
  for (tensorflow::NodeDef& node : *graph->mutable_node()) {
    if (!before.count(node.name())) (*node.mutable_attr())[kRewrittenByAttr].set_s(pass);
  }
}

}  // namespace

class NpuOptimizer : public tensorflow::grappler::CustomGraphOptimizer {
 public:
  std::string name() const override { return "NpuOptimizer"; }
  bool UsesFunctionLibrary() const override { return false; }

  // Rejects a parameter_map whose pass-contract keys do not hold their kinds (the error names the key).
  absl::Status Init(const tensorflow::RewriterConfig_CustomGraphOptimizer* config) override {
    return NoThrow("NpuOptimizer initialization", [&] { return InitSafely(config); });
  }

  absl::Status Optimize(tensorflow::grappler::Cluster*, const tensorflow::grappler::GrapplerItem& item,
                        tensorflow::GraphDef* optimized_graph) override {
    return NoThrow("NpuOptimizer", [&] { return OptimizeSafely(item, optimized_graph); });
  }

 private:
  absl::Status InitSafely(const tensorflow::RewriterConfig_CustomGraphOptimizer* config) {
    plan_ = PassPlan();
    init_status_ = config == nullptr ? absl::OkStatus() : PassPlan::FromConfig(*config, &plan_);
    passes_ = CreateRewritePasses();
    RecordInit(plan_.Keys());
    return init_status_;
  }

  absl::Status OptimizeSafely(const tensorflow::grappler::GrapplerItem& item, tensorflow::GraphDef* optimized_graph) {
    if (!init_status_.ok()) return init_status_;
    if (!plan_.validated()) {
      // Sessions created through npu_bridge are always validated; anything else was built around it.
      return absl::FailedPreconditionError(
          "npu_bridge: NpuOptimizer options were not validated by the session bridge; create sessions "
          "after `import npu_bridge`");
    }
    // Ascend initializes its runtime lazily on the first run of a device graph; NPUInit does it itself.
    if (!GraphHasOp(item.graph, "NPUInit")) {
      SystemState::Get().Initialize(plan_.Get(contract::kInitToken), "graph", false);
    }
    if (RewrittenAlready(item.graph)) return absl::AbortedError("npu_bridge: graph already rewritten");
    std::vector<RewritePass*> enabled;
    std::vector<std::string> enabled_names;
    for (auto& pass : passes_) {
      if (pass->Enabled(plan_, item)) {
        enabled.push_back(pass.get());
        enabled_names.push_back(pass->name());
      }
    }
    RecordOptimize(item.graph.node_size(), enabled_names);
    if (enabled.empty()) return absl::AbortedError("npu_bridge: no rewrite requested");

    *optimized_graph = item.graph;
    bool changed = false;
    for (RewritePass* pass : enabled) {
      bool pass_changed = false;
      const std::unordered_set<std::string> before = NodeNames(*optimized_graph);
      absl::Status status =
          NoThrow(pass->name() + " pass", [&] { return pass->Run(plan_, item, optimized_graph, &pass_changed); });
      if (!status.ok()) {
        return absl::Status(status.code(), "npu_bridge " + pass->name() + " pass: " + std::string(status.message()));
      }
      if (pass_changed) StampAddedNodes(before, pass->name(), optimized_graph);
      changed = changed || pass_changed;
    }
    if (!changed) return absl::AbortedError("npu_bridge: nothing to rewrite");
    return absl::OkStatus();
  }

  PassPlan plan_;
  absl::Status init_status_;
  std::vector<std::unique_ptr<RewritePass>> passes_;
};

REGISTER_GRAPH_OPTIMIZER_AS(NpuOptimizer, "NpuOptimizer");

}  // namespace npu_bridge
