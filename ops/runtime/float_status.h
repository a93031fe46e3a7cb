// The emulated floating-point overflow register of this process's device. On Ascend the AI Core sets a
// device-wide status bit whenever a floating-point computation overflows; NpuGetFloatStatus(V2) reads it and
// NpuClearFloatStatus(V2) clears it. Here NpuOverflowCheck nodes (inserted by the overflow-check rewrite pass
// after floating-point op outputs) set it.
#ifndef NPU_BRIDGE_OPS_FLOAT_STATUS_H_
#define NPU_BRIDGE_OPS_FLOAT_STATUS_H_

namespace npu_bridge {

// Length of the int32 vector NpuGetFloatStatusV2 returns.
constexpr int kStatusV2Size = 8;

class FloatStatus {
 public:
  static void SetOverflow();
  static bool Overflowed();
  static void Clear();
};

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_FLOAT_STATUS_H_
