// Puts the session's collective timeout (hccl_timeout / HCCL_EXEC_TIMEOUT, decided in Python and handed down
// as "_npu_bridge_hccl_exec_timeout" seconds) on every collective op npu_bridge built, so that a collective
// built before the session existed is bounded by that session's timeout.
#include <string>

#include "optimizers/rewrite_pass.h"

namespace npu_bridge {
namespace {

constexpr char kTimeoutKey[] = "_npu_bridge_hccl_exec_timeout";
constexpr char kCollectiveMarker[] = "_npu_hccl_group";  // set by npu_bridge/core/collectives/primitives.py
constexpr char kTimeoutAttr[] = "timeout_seconds";

bool IsMarkedCollective(const tensorflow::NodeDef& node) {
  return node.attr().count(kCollectiveMarker) > 0 && node.attr().count(kTimeoutAttr) > 0;
}

class CollectiveTimeoutPass : public RewritePass {
 public:
  std::string name() const override { return "collective_timeout"; }

  bool Enabled(const PassOptions& options,
               const tensorflow::grappler::GrapplerItem& item) const override {
    if (!options.Has(kTimeoutKey)) return false;
    for (const auto& node : item.graph.node()) {
      if (IsMarkedCollective(node)) return true;
    }
    return false;
  }

  absl::Status Run(const PassOptions& options, const tensorflow::grappler::GrapplerItem&,
                   tensorflow::GraphDef* graph, bool* changed) override {
    const float timeout = static_cast<float>(options.GetInt(kTimeoutKey, 0));
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
