// The overflow mode of the simulated Ascend device (upstream's npu_plugin.set_device_sat_mode):
//   saturation  an fp16 result that overflows becomes +-65504 (Atlas training's only mode)
//   INF/NaN     IEEE behaviour: overflow gives inf
// Process-wide, like the device setting it mirrors. Unset means the backend's default (saturation for the
// simulated Ascend backend); the fp16 conversion kernels of that backend read it at run time.
#ifndef NPU_BRIDGE_OPS_DEVICE_MODE_H_
#define NPU_BRIDGE_OPS_DEVICE_MODE_H_

namespace npu_bridge {

enum class OverflowMode : int { kUnset = -1, kSaturation = 0, kInfNan = 1 };

class DeviceMode {
 public:
  static void SetOverflowMode(OverflowMode mode);
  static OverflowMode GetOverflowMode();
  // True unless INF/NaN mode was chosen: unset counts as saturation, the simulated backend's default.
  static bool Saturates() { return GetOverflowMode() != OverflowMode::kInfNan; }
};

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_DEVICE_MODE_H_
