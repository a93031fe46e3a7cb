// fp16 conversion on the simulated Ascend backend. The precision rewrite pass puts them where the executed
// graph produces fp16 values:
//   NpuCastToFp16(x: float) -> half     replaces Cast float->half
//   NpuSaturateFp16(x: half) -> half    follows every computing op with an fp16 output
// In saturation mode (ops/device_mode.h) a value beyond the fp16 range becomes +-65504 and the emulated
// float-status register (ops/float_status.h) is set, as Ascend's hardware does; NaN stays NaN and also sets
// the register. In INF/NaN mode both behave like TensorFlow (overflow gives inf; the overflow-check pass,
// when active, sees it).
#define EIGEN_USE_THREADS  // the conversion runs on the op's thread-pool device

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "ops/device_mode.h"
#include "ops/float_status.h"
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/platform/threadpool.h"

namespace npu_bridge {

REGISTER_OP("NpuCastToFp16")
    .Input("x: float")
    .Output("y: half")
    .SetIsStateful()  // writes the float-status register; must not be constant-folded or merged
    .SetShapeFn(tensorflow::shape_inference::UnchangedShape)
    .Doc("float -> float16 conversion of the simulated Ascend device (saturating in saturation mode).");

REGISTER_OP("NpuSaturateFp16")
    .Input("x: half")
    .Output("y: half")
    .SetIsStateful()
    .SetShapeFn(tensorflow::shape_inference::UnchangedShape)
    .Doc("Saturates inf to +-65504 in saturation mode, as the simulated Ascend device's fp16 arithmetic does.");

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

// Turns the infs of [begin, end) into +-65504 (saturation); NaN stays NaN.
void Saturate(uint16_t* bits, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if ((bits[i] & kExponentBits) == kExponentBits && (bits[i] & kMantissaBits) == 0) {
      bits[i] = static_cast<uint16_t>((bits[i] & 0x8000u) | kMaxMagnitudeBits);
    }
  }
}

// Scans `bits` for inf / NaN in parallel and, in saturation mode, saturates the infs. Returns true when
// there was any inf or NaN. `output` may alias `input`; it may be null when only scanning.
bool ScanAndSaturate(tensorflow::OpKernelContext* ctx, const uint16_t* input, uint16_t* output, int64_t n) {
  std::atomic<bool> found{false};
  auto* pool = ctx->device()->tensorflow_cpu_worker_threads()->workers;
  pool->ParallelFor(n, /*cost_per_unit=*/1, [&](int64_t begin, int64_t end) {
    if (!HasNonFinite(input, begin, end)) return;
    found.store(true, std::memory_order_relaxed);
    if (output != nullptr) Saturate(output, begin, end);
  });
  return found.load();
}

const uint16_t* Bits(const tensorflow::Tensor& tensor) {
  return reinterpret_cast<const uint16_t*>(tensor.tensor_data().data());
}

uint16_t* MutableBits(tensorflow::Tensor* tensor) {
  return reinterpret_cast<uint16_t*>(const_cast<char*>(tensor->tensor_data().data()));
}

class CastToFp16Op : public tensorflow::OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& x = ctx->input(0);
    tensorflow::Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    // TensorFlow's own conversion (round to nearest even; overflow gives inf), then the overflow check.
    y->flat<Eigen::half>().device(ctx->eigen_cpu_device()) = x.flat<float>().template cast<Eigen::half>();
    if (!DeviceMode::Saturates()) return;
    if (ScanAndSaturate(ctx, Bits(*y), MutableBits(y), x.NumElements())) FloatStatus::SetOverflow();
  }
};

class SaturateFp16Op : public tensorflow::OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& x = ctx->input(0);
    if (!DeviceMode::Saturates() || !ScanAndSaturate(ctx, Bits(x), nullptr, x.NumElements())) {
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

REGISTER_KERNEL_BUILDER(Name("NpuCastToFp16").Device(tensorflow::DEVICE_CPU), CastToFp16Op);
REGISTER_KERNEL_BUILDER(Name("NpuSaturateFp16").Device(tensorflow::DEVICE_CPU), SaturateFp16Op);

}  // namespace npu_bridge
