// Stamps the token of the session's init-stage options on NPUInit nodes, so that running initialize_system() in a
// bridged session makes that session's init options process-wide (as upstream's graph pass does).
#include "ops/runtime/system_state.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"

namespace npu_bridge {
namespace {

class InitOptionsPass : public RewritePass {
 public:
  std::string name() const override { return "init_options"; }

  bool Enabled(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item) const override {
    return plan.validated() && GraphHasOp(item.graph, "NPUInit");
  }

  absl::Status Run(const PassPlan& plan, const tensorflow::grappler::GrapplerItem&, tensorflow::GraphDef* graph,
                   bool* changed) override {
    const std::string init_token = plan.Get(contract::kInitToken);
    for (auto& node : *graph->mutable_node()) {
      if (node.op() != "NPUInit") continue;
      auto* attrs = node.mutable_attr();
      auto it = attrs->find(kInitTokenAttr);
      if (it != attrs->end() && it->second.s() == init_token) continue;
      (*attrs)[kInitTokenAttr].set_s(init_token);
      *changed = true;
    }
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(100, InitOptionsPass);

}  // namespace npu_bridge
