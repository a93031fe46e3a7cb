// NpuSaturateFp16(x: half) -> half: fp16 overflow on the simulated Ascend backend. The fp16 saturation pass
// puts one after every fp16 value the executed graph produces (casts to fp16 and computing ops with fp16
// outputs). In saturation mode (ops/runtime/device_mode.h) an inf becomes +-65504 and the emulated float-status
// register (ops/runtime/float_status.h) is set, as Ascend's hardware does when an fp16 result overflows; a NaN becomes
// 0 (Ascend's saturation mode has no NaN: a result that cannot be computed, 0/0 or the root of -1, is 0) and also sets
// the register. In INF/NaN mode it passes its input through (the overflow-check pass, when
// active, sees the inf). The input is forwarded without a copy unless something has to change.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "ops/runtime/device_mode.h"
#include "ops/runtime/float_status.h"
#include "ops/runtime/no_throw.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/platform/threadpool.h"

namespace npu_bridge {

namespace {

constexpr uint16_t kExponentBits = 0x7c00u;
constexpr uint16_t kMantissaBits = 0x03ffu;
constexpr uint16_t kMaxMagnitudeBits = 0x7bffu;  // 65504

// True when some fp16 value in [begin, end) is inf or NaN (all exponent bits set); branch-free so it vectorizes.
bool HasNonFinite(const uint16_t* bits, int64_t begin, int64_t end) {
  uint16_t found = 0;
  for (int64_t i = begin; i < end; ++i) found |= static_cast<uint16_t>((bits[i] & kExponentBits) == kExponentBits);
  return found != 0;
}

// Turns the infs of [begin, end) into +-65504 and the NaNs into 0 (saturation mode).
void Saturate(uint16_t* bits, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if ((bits[i] & kExponentBits) != kExponentBits) continue;
    bits[i] = (bits[i] & kMantissaBits) == 0 ? static_cast<uint16_t>((bits[i] & 0x8000u) | kMaxMagnitudeBits) : 0;
  }
}

// Scans `bits` for inf / NaN in parallel; returns true when there is any.
bool AnyNonFinite(tensorflow::OpKernelContext* ctx, const uint16_t* bits, int64_t n) {
  std::atomic<bool> found{false};
  auto* pool = ctx->device()->tensorflow_cpu_worker_threads()->workers;
  pool->ParallelFor(n, /*cost_per_unit=*/1, [&](int64_t begin, int64_t end) {
    if (HasNonFinite(bits, begin, end)) found.store(true, std::memory_order_relaxed);
  });
  return found.load();
}

const uint16_t* Bits(const tensorflow::Tensor& tensor) {
  return reinterpret_cast<const uint16_t*>(tensor.tensor_data().data());
}

uint16_t* MutableBits(tensorflow::Tensor* tensor) {
  return reinterpret_cast<uint16_t*>(const_cast<char*>(tensor->tensor_data().data()));
}

class SaturateFp16Op : public NpuOpKernel {
 public:
  using NpuOpKernel::NpuOpKernel;

  void ComputeSafely(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& x = ctx->input(0);
    if (!DeviceMode::Saturates() || !AnyNonFinite(ctx, Bits(x), x.NumElements())) {
      ctx->set_output(0, x);  // the common case: nothing to change, no copy
      return;
    }
    FloatStatus::SetOverflow();
    tensorflow::Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    std::copy_n(Bits(x), x.NumElements(), MutableBits(y));
    Saturate(MutableBits(y), 0, x.NumElements());
  }
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("NpuSaturateFp16").Device(tensorflow::DEVICE_CPU), SaturateFp16Op);

}  // namespace npu_bridge
