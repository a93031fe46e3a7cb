#include "ops/runtime/float_status.h"

#include <atomic>

namespace npu_bridge {
namespace {

std::atomic<bool>& Register() {
  static std::atomic<bool> overflowed{false};
  return overflowed;
}

}  // namespace

void FloatStatus::SetOverflow() { Register().store(true, std::memory_order_relaxed); }
bool FloatStatus::Overflowed() { return Register().load(std::memory_order_relaxed); }
void FloatStatus::Clear() { Register().store(false, std::memory_order_relaxed); }

}  // namespace npu_bridge
