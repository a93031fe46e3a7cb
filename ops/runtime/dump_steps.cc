#include "ops/dump_steps.h"

#include <map>
#include <memory>
#include <sstream>

namespace npu_bridge {

ModelSteps* ModelSteps::ForModel(int64_t model_id) {
  static std::mutex mu;
  static auto* models = new std::map<int64_t, std::unique_ptr<ModelSteps>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<ModelSteps>& steps = (*models)[model_id];
  if (!steps) steps.reset(new ModelSteps());
  return steps.get();
}

int64_t ModelSteps::StepOf(int64_t step_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < used_slots_; ++i) {
    if (recent_[i].first == step_id) return recent_[i].second;
  }
  recent_[next_slot_] = {step_id, ++last_step_};
  next_slot_ = (next_slot_ + 1) % kRecentRuns;
  if (used_slots_ < kRecentRuns) ++used_slots_;
  return last_step_;
}

bool ModelSteps::FirstReport(int64_t step, int64_t task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (step != reported_step_) {
    reported_step_ = step;
    reported_tasks_.clear();
  }
  return reported_tasks_.insert(task_id).second;
}

StepSelection::StepSelection(const std::string& spec) {
  if (spec.empty()) return;
  all_ = false;
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, '|')) {
    const size_t dash = item.find('-');
    const int64_t first = std::stoll(item.substr(0, dash));
    const int64_t last = dash == std::string::npos ? first : std::stoll(item.substr(dash + 1));
    ranges_.push_back({first, last});
  }
}

bool StepSelection::Contains(int64_t step) const {
  if (all_) return true;
  for (const auto& range : ranges_) {
    if (step >= range.first && step <= range.second) return true;
  }
  return false;
}

}  // namespace npu_bridge
