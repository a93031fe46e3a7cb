#include "ops/runtime/dump_steps.h"

#include <map>
#include <memory>
#include <string>

namespace npu_bridge {

ModelSteps* ModelSteps::ForModel(int64_t model_id) {
  static std::mutex mu;
  static auto* models = new std::map<int64_t, std::unique_ptr<ModelSteps>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<ModelSteps>& steps = (*models)[model_id];
  if (!steps) steps.reset(new ModelSteps());
  return steps.get();
}

int64_t ModelSteps::StepOf(int64_t step_id, int64_t steps_per_run, bool in_loop) {
  const int64_t iteration = in_loop ? LoopIterations::Of(step_id) : 0;
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < used_slots_; ++i) {
    if (recent_[i].first == step_id) return recent_[i].second + iteration;
  }
  const int64_t first = next_step_;
  next_step_ += steps_per_run > 0 ? steps_per_run : 1;
  recent_[next_slot_] = {step_id, first};
  next_slot_ = (next_slot_ + 1) % kRecentRuns;
  if (used_slots_ < kRecentRuns) ++used_slots_;
  return first + iteration;
}

namespace {

// (step_id, iteration) of the runs whose loops ran most recently; runs of several sessions may overlap.
struct LoopIterationTable {
  static constexpr int kSlots = 64;
  std::mutex mu;
  std::pair<int64_t, int64_t> slots[kSlots];
  int next_slot = 0;
  int used_slots = 0;
};

LoopIterationTable& IterationTable() {
  static auto* table = new LoopIterationTable();
  return *table;
}

}  // namespace

void LoopIterations::Set(int64_t step_id, int64_t iteration) {
  LoopIterationTable& table = IterationTable();
  std::lock_guard<std::mutex> lock(table.mu);
  for (int i = 0; i < table.used_slots; ++i) {
    if (table.slots[i].first == step_id) {
      table.slots[i].second = iteration;
      return;
    }
  }
  table.slots[table.next_slot] = {step_id, iteration};
  table.next_slot = (table.next_slot + 1) % LoopIterationTable::kSlots;
  if (table.used_slots < LoopIterationTable::kSlots) ++table.used_slots;
}

int64_t LoopIterations::Of(int64_t step_id) {
  LoopIterationTable& table = IterationTable();
  std::lock_guard<std::mutex> lock(table.mu);
  for (int i = 0; i < table.used_slots; ++i) {
    if (table.slots[i].first == step_id) return table.slots[i].second;
  }
  return 0;
}

bool ModelSteps::FirstReport(int64_t step, int64_t task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (step != reported_step_) {
    reported_step_ = step;
    reported_tasks_.clear();
  }
  return reported_tasks_.insert(task_id).second;
}

absl::Status StepSelection::FromPairs(const std::vector<int64_t>& pairs, StepSelection* selection) {
  if (pairs.size() % 2 != 0) {
    return absl::InvalidArgumentError("npu_bridge: dump steps must be first, last pairs; got " +
                                      std::to_string(pairs.size()) + " numbers");
  }
  StepSelection parsed;
  for (size_t k = 0; k < pairs.size(); k += 2) {
    if (pairs[k] < 0 || pairs[k] > pairs[k + 1]) {
      return absl::InvalidArgumentError("npu_bridge: dump step range " + std::to_string(pairs[k]) + "-" +
                                        std::to_string(pairs[k + 1]) + " is not a range of steps (0 <= first <= last)");
    }
    parsed.ranges_.push_back({pairs[k], pairs[k + 1]});
  }
  parsed.all_ = parsed.ranges_.empty();
  *selection = std::move(parsed);
  return absl::OkStatus();
}

bool StepSelection::Contains(int64_t step) const {
  if (all_) return true;
  for (const auto& range : ranges_) {
    if (step >= range.first && step <= range.second) return true;
  }
  return false;
}

}  // namespace npu_bridge
