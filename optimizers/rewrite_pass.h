// The rewrite passes the NpuOptimizer Grappler pass runs, in order. Each capability (init options, precision
// casts, float status, dump, overflow checks, ...) is one RewritePass in its own file, registered with
// REGISTER_NPU_REWRITE_PASS. A pass that is not Enabled() for the session's plan costs nothing.
//
// Ordering (lower runs first); leave gaps so passes can be added between:
//   100 system init options   190 implementation modes   200 precision rewrite   250 fp16 saturation
//   300 overflow checks (float status, overflow detection)   400 dump   450 exception capture
//   500 collective timeouts   800 fp16 convolution gradients on the CPU in float32
//   900 iterations_per_loop loop (last: it moves the whole step into a loop)
#ifndef NPU_BRIDGE_OPTIMIZERS_REWRITE_PASS_H_
#define NPU_BRIDGE_OPTIMIZERS_REWRITE_PASS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "optimizers/pass_plan.h"
#include "tensorflow/core/framework/graph.pb.h"
#include "tensorflow/core/grappler/grappler_item.h"

namespace npu_bridge {

class RewritePass {
 public:
  virtual ~RewritePass() = default;
  virtual std::string name() const = 0;
  // Decides cheaply (no graph copy has been made yet) whether this pass has work on `item`.
  virtual bool Enabled(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item) const = 0;
  // Rewrites `graph` (a copy of item.graph, possibly already changed by earlier passes). Grappler may call
  // the NpuOptimizer more than once per graph, so a pass must recognise its own work and not redo it.
  // Sets *changed when it modified the graph.
  virtual absl::Status Run(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item,
                           tensorflow::GraphDef* graph, bool* changed) = 0;
};

using RewritePassFactory = std::function<std::unique_ptr<RewritePass>()>;

// True when `graph` has a node of type `op`.
bool GraphHasOp(const tensorflow::GraphDef& graph, const std::string& op);

// Registers a pass; called at library load time by REGISTER_NPU_REWRITE_PASS.
bool RegisterRewritePass(int order, RewritePassFactory factory);

// New instances of every registered pass, in order.
std::vector<std::unique_ptr<RewritePass>> CreateRewritePasses();

}  // namespace npu_bridge

#define NPU_REWRITE_PASS_CONCAT_INNER(a, b) a##b
#define NPU_REWRITE_PASS_CONCAT(a, b) NPU_REWRITE_PASS_CONCAT_INNER(a, b)
#define REGISTER_NPU_REWRITE_PASS(order, PassClass)                                      \
  static const bool NPU_REWRITE_PASS_CONCAT(npu_rewrite_pass_registered_, __COUNTER__) = \
      ::npu_bridge::RegisterRewritePass(order,                                           \
                                        [] { return std::unique_ptr<::npu_bridge::RewritePass>(new PassClass()); })

#endif  // NPU_BRIDGE_OPTIMIZERS_REWRITE_PASS_H_
