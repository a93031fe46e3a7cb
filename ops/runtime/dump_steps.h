// Step numbers of instrumented graphs. Ascend counts iterations per compiled model; here every graph the
// NpuOptimizer pass instruments gets a model id, and a step is one Session.run of that graph. Kernels know
// their run by `OpKernelContext::step_id()` (the same for every kernel of one run, also inside loops), so
// the first dump kernel of a new run advances the model's step -- no extra node, nothing to order.
#ifndef NPU_BRIDGE_OPS_DUMP_STEPS_H_
#define NPU_BRIDGE_OPS_DUMP_STEPS_H_

#include <cstdint>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace npu_bridge {

class ModelSteps {
 public:
  // The state of one model id; lives for the process.
  static ModelSteps* ForModel(int64_t model_id);

  // The step number (0, 1, ...) of the run identified by `step_id`.
  int64_t StepOf(int64_t step_id);
  // True the first time (step, task_id) is reported: an op with several overflowing outputs is
  // recorded once per step.
  bool FirstReport(int64_t step, int64_t task_id);

 private:
  static constexpr int kRecentRuns = 16;  // runs of one graph that may overlap (concurrent Session.run)
  std::mutex mu_;
  int64_t last_step_ = -1;
  std::pair<int64_t, int64_t> recent_[kRecentRuns];  // (step_id, step)
  int next_slot_ = 0;
  int used_slots_ = 0;
  int64_t reported_step_ = -1;
  std::set<int64_t> reported_tasks_;
};

// The steps dump_step selects, as Python parsed them: first, last pairs (dump_step "0|5|10-20" is
// {0, 0, 5, 5, 10, 20}); no pairs select every step.
class StepSelection {
 public:
  StepSelection() = default;  // every step
  // An odd count, a negative step or first > last is an InvalidArgument error; *selection is then unchanged.
  static absl::Status FromPairs(const std::vector<int64_t>& pairs, StepSelection* selection);
  bool Contains(int64_t step) const;

 private:
  bool all_ = true;
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_DUMP_STEPS_H_
