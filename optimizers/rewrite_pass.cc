#include "optimizers/rewrite_pass.h"

#include <algorithm>
#include <mutex>
#include <utility>

namespace npu_bridge {
namespace {

struct Entry {
  int order;
  RewritePassFactory factory;
};

std::vector<Entry>& Registry() {
  static auto* registry = new std::vector<Entry>();
  return *registry;
}

std::mutex& RegistryMutex() {
  static auto* mu = new std::mutex();
  return *mu;
}

}  // namespace

bool GraphHasOp(const tensorflow::GraphDef& graph, const std::string& op) {
  for (const auto& node : graph.node()) {
    if (node.op() == op) return true;
  }
  return false;
}

bool RegisterRewritePass(int order, RewritePassFactory factory) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry().push_back({order, std::move(factory)});
  std::stable_sort(Registry().begin(), Registry().end(),
                   [](const Entry& a, const Entry& b) { return a.order < b.order; });
  return true;
}

std::vector<std::unique_ptr<RewritePass>> CreateRewritePasses() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::vector<std::unique_ptr<RewritePass>> passes;
  for (const Entry& e : Registry()) passes.push_back(e.factory());
  return passes;
}

}  // namespace npu_bridge
