// Puts the session's collective timeout (hccl_timeout / HCCL_EXEC_TIMEOUT, decided once by the session plan and
// handed down as contract::kCollectiveTimeout seconds) on every collective op npu_bridge built, so that a
// collective built before the session existed is bounded by that session's timeout.
#include <string>

#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"

namespace npu_bridge {
namespace {

constexpr char kTimeoutAttr[] = "timeout_seconds";

bool IsMarkedCollective(const tensorflow::NodeDef& node) {
  return node.attr().count(contract::kCollectiveGroupAttr.name) > 0 && node.attr().count(kTimeoutAttr) > 0;
}

class CollectiveTimeoutPass : public RewritePass {
 public:
  std::string name() const override { return "collective_timeout"; }

  bool Enabled(const PassOptions& options, const tensorflow::grappler::GrapplerItem& item) const override {
    if (options.Get(contract::kCollectiveTimeout) <= 0) return false;
    for (const auto& node : item.graph.node()) {
      if (IsMarkedCollective(node)) return true;
    }
    return false;
  }

  absl::Status Run(const PassOptions& options, const tensorflow::grappler::GrapplerItem&, tensorflow::GraphDef* graph,
                   bool* changed) override {
    const float timeout = static_cast<float>(options.Get(contract::kCollectiveTimeout));
    for (auto& node : *graph->mutable_node()) {
      if (!IsMarkedCollective(node)) continue;
      auto& attr = (*node.mutable_attr())[kTimeoutAttr];
      if (attr.f() == timeout) continue;
      attr.set_f(timeout);
      *changed = true;
    }
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(500, CollectiveTimeoutPass);

}  // namespace npu_bridge
