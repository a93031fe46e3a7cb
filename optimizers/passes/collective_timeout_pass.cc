// Bounds the collectives npu_bridge built by the session's collective timeout (hccl_timeout / HCCL_EXEC_TIMEOUT,
// decided once by the session plan and handed down as contract::kCollectiveTimeout seconds).
//
// In a session whose run hook bounds each run with collectives (contract::kCollectiveRunBound: sessions of a
// multi-rank world), a collective outside any loop runs once per Session.run and that run's deadline
// (RunOptions.timeout_in_ms, times iterations_per_loop for the loop that pass builds later) bounds it, so here
// the op's own timeout is cleared: TensorFlow keeps a timer closure alive for every execution of a collective
// with a timeout until the timeout expires (about 9 KB per run for 1,836 s: memory that grows with the number
// of runs). A collective inside a while loop of the user's graph runs many times per run and keeps the timeout
// as its own bound, as do all collectives of sessions whose runs are not bounded.
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "optimizers/graph/graph_util.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"

namespace npu_bridge {
namespace {

constexpr char kTimeoutAttr[] = "timeout_seconds";

bool IsMarkedCollective(const tensorflow::NodeDef& node) {
  return node.attr().count(contract::kCollectiveGroupAttr.name) > 0 && node.attr().count(kTimeoutAttr) > 0;
}

// Nodes inside a while loop: reachable from an Enter node without passing through an Exit node.
std::unordered_set<std::string> NodesInLoops(const tensorflow::GraphDef& graph) {
  std::unordered_map<std::string, std::vector<const tensorflow::NodeDef*>> consumers;
  std::deque<const tensorflow::NodeDef*> pending;
  for (const auto& node : graph.node()) {
    for (const std::string& input : node.input()) consumers[ParseInput(input).first].push_back(&node);
    if (node.op() == "Enter" || node.op() == "RefEnter") pending.push_back(&node);
  }
  std::unordered_set<std::string> inside;
  while (!pending.empty()) {
    const tensorflow::NodeDef* node = pending.front();
    pending.pop_front();
    if (!inside.insert(node->name()).second || node->op() == "Exit" || node->op() == "RefExit") continue;
    for (const tensorflow::NodeDef* consumer : consumers[node->name()]) pending.push_back(consumer);
  }
  return inside;
}

class CollectiveTimeoutPass : public RewritePass {
 public:
  std::string name() const override { return "collective_timeout"; }

  bool Enabled(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item) const override {
    if (plan.Get(contract::kCollectiveTimeout) <= 0) return false;
    for (const auto& node : item.graph.node()) {
      if (IsMarkedCollective(node)) return true;
    }
    return false;
  }

  absl::Status Run(const PassPlan& plan, const tensorflow::grappler::GrapplerItem&, tensorflow::GraphDef* graph,
                   bool* changed) override {
    const float timeout = static_cast<float>(plan.Get(contract::kCollectiveTimeout));
    const bool run_bound = plan.Get(contract::kCollectiveRunBound);
    const std::unordered_set<std::string> in_loops =
        run_bound ? NodesInLoops(*graph) : std::unordered_set<std::string>();
    for (auto& node : *graph->mutable_node()) {
      if (!IsMarkedCollective(node)) continue;
      const float wanted = !run_bound || in_loops.count(node.name()) ? timeout : 0.0f;
      auto& attr = (*node.mutable_attr())[kTimeoutAttr];
      if (attr.f() == wanted) continue;
      attr.set_f(wanted);
      *changed = true;
    }
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(500, CollectiveTimeoutPass);

}  // namespace npu_bridge
