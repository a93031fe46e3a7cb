#include "ops/runtime/device_mode.h"

#include <atomic>

#include "ops/runtime/c_api.h"

namespace npu_bridge {
namespace {

std::atomic<int>& Mode() {
  static std::atomic<int> mode{static_cast<int>(OverflowMode::kUnset)};
  return mode;
}

}  // namespace

void DeviceMode::SetOverflowMode(OverflowMode mode) { Mode().store(static_cast<int>(mode)); }
OverflowMode DeviceMode::GetOverflowMode() { return static_cast<OverflowMode>(Mode().load()); }

}  // namespace npu_bridge

// ctypes entry points (npu_bridge/core/device/device_mode.py). Modes: -1 unset, 0 saturation, 1 INF/NaN.
// They cannot throw (an atomic store and load).
extern "C" void npu_bridge_set_overflow_mode(int mode) {
  npu_bridge::DeviceMode::SetOverflowMode(static_cast<npu_bridge::OverflowMode>(mode));
}
extern "C" int npu_bridge_overflow_mode() { return static_cast<int>(npu_bridge::DeviceMode::GetOverflowMode()); }
