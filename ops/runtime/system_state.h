// Process-wide NPU "system" state shared by the NPUInit/NPUShutdown kernels, the NpuOptimizer pass and
// Python (through the extern "C" functions in system_state.cc).
#ifndef NPU_BRIDGE_OPS_SYSTEM_STATE_H_
#define NPU_BRIDGE_OPS_SYSTEM_STATE_H_

#include <cstdint>
#include <mutex>
#include <string>

namespace npu_bridge {

// Attribute the NpuOptimizer pass stamps on NPUInit nodes: the token of the bridged session's init-stage options.
constexpr char kInitTokenAttr[] = "_npu_init_token";

struct SystemSnapshot {
  bool initialized = false;
  bool global = false;     // initialized by npu_resource_init: NPUInit/NPUShutdown are no-ops
  std::string source;      // "NPUInit", "graph" or "resource_init"
  std::string init_token;  // names the init-stage options in force; only Python reads them (runtime/system.py)
  int64_t init_count = 0;  // number of initializations so far in this process
};

class SystemState {
 public:
  static SystemState& Get();

  // Initializes unless already initialized. The first initialization fixes the init-stage options for
  // the process, as on Ascend. Returns true if this call initialized the system.
  bool Initialize(const std::string& init_token, const std::string& source, bool global);

  // Shuts the system down. A global initialization is only finalized when `force` is set.
  // Returns true if the system was initialized and is now shut down.
  bool Shutdown(bool force);

  SystemSnapshot Snapshot() const;

 private:
  mutable std::mutex mu_;
  SystemSnapshot state_;
};

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_SYSTEM_STATE_H_
