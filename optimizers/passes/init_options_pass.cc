// Stamps the session's init-stage options on NPUInit nodes, so that running initialize_system() in a
// bridged session makes that session's init options process-wide (as upstream's graph pass does).
#include "ops/runtime/system_state.h"
#include "optimizers/init_options.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"

namespace npu_bridge {
namespace {

class InitOptionsPass : public RewritePass {
 public:
  std::string name() const override { return "init_options"; }

  bool Enabled(const PassOptions& options, const tensorflow::grappler::GrapplerItem& item) const override {
    return options.validated() && GraphHasOp(item.graph, "NPUInit");
  }

  absl::Status Run(const PassOptions& options, const tensorflow::grappler::GrapplerItem&, tensorflow::GraphDef* graph,
                   bool* changed) override {
    std::string init_options;
    absl::Status status = InitOptionsJson(options.Get(contract::kInitOptions), &init_options);
    if (!status.ok()) return status;
    for (auto& node : *graph->mutable_node()) {
      if (node.op() != "NPUInit") continue;
      auto* attrs = node.mutable_attr();
      auto it = attrs->find(kInitOptionsAttr);
      if (it != attrs->end() && it->second.s() == init_options) continue;
      (*attrs)[kInitOptionsAttr].set_s(init_options);
      *changed = true;
    }
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(100, InitOptionsPass);

}  // namespace npu_bridge
