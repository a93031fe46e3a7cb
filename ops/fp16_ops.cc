// fp16 conversion on the simulated Ascend backend. The precision rewrite pass puts them where the executed
// graph produces fp16 values:
//   NpuCastToFp16(x: float) -> half     replaces Cast float->half
//   NpuSaturateFp16(x: half) -> half    follows every computing op with an fp16 output
// In saturation mode (ops/device_mode.h) a value beyond the fp16 range becomes +-65504 and the emulated
// float-status register (ops/float_status.h) is set, as Ascend's hardware does; NaN stays NaN and also sets
// the register. In INF/NaN mode both behave like TensorFlow (overflow gives inf; the overflow-check pass,
// when active, sees it).
#include <atomic>
#include <cmath>
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

constexpr float kFp16Max = 65504.0f;
// Finite floats at or above this magnitude round to inf in float16 (round to nearest even).
constexpr float kFp16Overflow = 65520.0f;

template <typename Body>
bool ParallelAny(tensorflow::OpKernelContext* ctx, int64_t n, Body body) {
  std::atomic<bool> any{false};
  auto* pool = ctx->device()->tensorflow_cpu_worker_threads()->workers;
  pool->ParallelFor(n, /*cost_per_unit=*/4, [&](int64_t begin, int64_t end) {
    if (body(begin, end)) any.store(true, std::memory_order_relaxed);
  });
  return any.load();
}

class CastToFp16Op : public tensorflow::OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& x = ctx->input(0);
    tensorflow::Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const float* in = x.flat<float>().data();
    Eigen::half* out = y->flat<Eigen::half>().data();
    const bool saturate = DeviceMode::Saturates();
    const bool overflowed = ParallelAny(ctx, x.NumElements(), [&](int64_t begin, int64_t end) {
      bool bad = false;
      for (int64_t i = begin; i < end; ++i) {
        float v = in[i];
        if (!(std::fabs(v) < kFp16Overflow)) {  // also true for NaN
          bad = true;
          if (saturate && !std::isnan(v)) v = std::copysign(kFp16Max, v);
        }
        out[i] = static_cast<Eigen::half>(v);
      }
      return bad;
    });
    if (overflowed && saturate) FloatStatus::SetOverflow();
  }
};

class SaturateFp16Op : public tensorflow::OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& x = ctx->input(0);
    if (!DeviceMode::Saturates()) {
      ctx->set_output(0, x);
      return;
    }
    tensorflow::Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const uint16_t* in = reinterpret_cast<const uint16_t*>(x.tensor_data().data());
    uint16_t* out = reinterpret_cast<uint16_t*>(const_cast<char*>(y->tensor_data().data()));
    const bool overflowed = ParallelAny(ctx, x.NumElements(), [&](int64_t begin, int64_t end) {
      bool bad = false;
      for (int64_t i = begin; i < end; ++i) {
        uint16_t bits = in[i];
        if ((bits & 0x7c00u) == 0x7c00u) {  // inf or NaN
          bad = true;
          if ((bits & 0x03ffu) == 0) bits = static_cast<uint16_t>((bits & 0x8000u) | 0x7bffu);  // inf -> max
        }
        out[i] = bits;
      }
      return bad;
    });
    if (overflowed) FloatStatus::SetOverflow();
  }
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("NpuCastToFp16").Device(tensorflow::DEVICE_CPU), CastToFp16Op);
REGISTER_KERNEL_BUILDER(Name("NpuSaturateFp16").Device(tensorflow::DEVICE_CPU), SaturateFp16Op);

}  // namespace npu_bridge
