#include "ops/runtime/system_state.h"

#include "ops/runtime/c_api.h"
#include "ops/runtime/json_text.h"
#include "ops/runtime/no_throw.h"
#include "tensorflow/core/platform/logging.h"

namespace npu_bridge {

SystemState& SystemState::Get() {
  static SystemState* state = new SystemState();  // never destroyed: kernels may run during exit
  return *state;
}

bool SystemState::Initialize(const std::string& init_token, const std::string& source, bool global) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_.initialized) {
    VLOG(1) << "npu_bridge: system already initialized by " << state_.source << "; " << source
            << " initialization skipped";
    return false;
  }
  state_.initialized = true;
  state_.global = global;
  state_.source = source;
  state_.init_token = init_token;
  ++state_.init_count;
  return true;
}

bool SystemState::Shutdown(bool force) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!state_.initialized || (state_.global && !force)) return false;
  const int64_t count = state_.init_count;
  state_ = SystemSnapshot();
  state_.init_count = count;
  return true;
}

SystemSnapshot SystemState::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

namespace {

size_t SystemStateJson(char* buf, size_t len) {
  const SystemSnapshot s = SystemState::Get().Snapshot();
  std::string json = "{\"initialized\":" + std::string(s.initialized ? "true" : "false") +
                     ",\"global\":" + std::string(s.global ? "true" : "false") + ",\"source\":" + JsonQuote(s.source) +
                     ",\"init_token\":" + JsonQuote(s.init_token) + ",\"init_count\":" + std::to_string(s.init_count) +
                     "}";
  return CopyToBuffer(json, buf, len);
}

}  // namespace

}  // namespace npu_bridge

extern "C" {

int npu_bridge_system_initialize(const char* init_token, const char* source, int global) {
  return npu_bridge::NoThrowValue(0, [&] {
    return static_cast<int>(
        npu_bridge::SystemState::Get().Initialize(init_token ? init_token : "", source ? source : "", global != 0));
  });
}

int npu_bridge_system_shutdown(int force) {
  return npu_bridge::NoThrowValue(
      0, [&] { return static_cast<int>(npu_bridge::SystemState::Get().Shutdown(force != 0)); });
}

size_t npu_bridge_system_state_json(char* buf, size_t len) {
  return npu_bridge::NoThrowValue<size_t>(0, [&] { return npu_bridge::SystemStateJson(buf, len); });
}

}  // extern "C"
