// Step numbers of instrumented graphs. Ascend counts iterations per compiled model; here every graph the
// NpuOptimizer pass instruments gets a model id, and one Session.run of that graph is one step -- or, when the
// iterations_per_loop pass wrapped the run in a loop of N iterations, N steps, one per loop iteration, as on
// Ascend. Kernels know their run by `OpKernelContext::step_id()` (the same for every kernel of one run, also
// inside nested loops): the first dump kernel of a new run reserves the run's steps, and a kernel inside the
// iterations loop adds the loop iteration that `LoopIterations` holds for its run.
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

  // The step number (0, 1, ...) of the run identified by `step_id`; for a kernel `in_loop` (inside the
  // iterations_per_loop loop), the step of the loop iteration `LoopIterations` holds for the run. The first
  // call for a run reserves `steps_per_run` steps (1, or iterations_per_loop for a looping graph): the run's
  // iterations are steps first .. first + steps_per_run - 1, and the next run starts after them.
  int64_t StepOf(int64_t step_id, int64_t steps_per_run = 1, bool in_loop = false);
  // True the first time (step, task_id) is reported: an op with several overflowing outputs is
  // recorded once per step.
  bool FirstReport(int64_t step, int64_t task_id);

 private:
  static constexpr int kRecentRuns = 16;  // runs of one graph that may overlap (concurrent Session.run)
  std::mutex mu_;
  int64_t next_step_ = 0;
  std::pair<int64_t, int64_t> recent_[kRecentRuns];  // (step_id, first step of the run)
  int next_slot_ = 0;
  int used_slots_ = 0;
  int64_t reported_step_ = -1;
  std::set<int64_t> reported_tasks_;
};

// The iteration (0, 1, ...) the iterations_per_loop loop of each running Session.run is in. The loop's
// NpuLoopIteration marker (ops/kernels/loop_iteration_kernels.cc) sets it at the start of every iteration,
// before any per-step node of that iteration runs; the loop runs one iteration at a time, so every kernel of
// iteration k -- in nested while loops too -- reads k.
class LoopIterations {
 public:
  static void Set(int64_t step_id, int64_t iteration);
  // 0 for a run whose loop has not started (or that has no loop).
  static int64_t Of(int64_t step_id);
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
