#include "optimizers/pass_stats.h"

#include <cstdint>
#include <mutex>

#include "ops/runtime/c_api.h"
#include "ops/runtime/json_text.h"
#include "ops/runtime/no_throw.h"

namespace npu_bridge {
namespace {

struct Stats {
  std::mutex mu;
  int64_t init_calls = 0;
  int64_t optimize_calls = 0;
  int last_node_count = 0;
  std::vector<std::string> last_option_keys;
  std::vector<std::string> last_passes_run;
};

Stats& Get() {
  static auto* stats = new Stats();
  return *stats;
}

std::string JsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ",";
    out += JsonQuote(items[i]);
  }
  return out + "]";
}

}  // namespace

void RecordInit(const std::vector<std::string>& option_keys) {
  Stats& s = Get();
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.init_calls;
  s.last_option_keys = option_keys;
}

void RecordOptimize(int node_count, const std::vector<std::string>& passes_run) {
  Stats& s = Get();
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.optimize_calls;
  s.last_node_count = node_count;
  s.last_passes_run = passes_run;
}

}  // namespace npu_bridge

extern "C" size_t npu_bridge_pass_stats_json(char* buf, size_t len) {
  return npu_bridge::NoThrowValue<size_t>(0, [&]() -> size_t {
    npu_bridge::Stats& s = npu_bridge::Get();
    std::string json;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      json = "{\"init_calls\":" + std::to_string(s.init_calls) +
             ",\"optimize_calls\":" + std::to_string(s.optimize_calls) +
             ",\"last_node_count\":" + std::to_string(s.last_node_count) +
             ",\"last_option_keys\":" + npu_bridge::JsonList(s.last_option_keys) +
             ",\"last_passes_run\":" + npu_bridge::JsonList(s.last_passes_run) + "}";
    }
    return npu_bridge::CopyToBuffer(json, buf, len);
  });
}
