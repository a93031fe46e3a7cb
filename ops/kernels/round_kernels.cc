// NpuRound(x: float) -> float: x rounded (to nearest even) to `to` (float16 or bfloat16) and widened back, as
// a Cast there and a Cast back would give, in one pass over the data. The precision pass
// (optimizers/passes/precision_pass.cc) puts it where Ascend computes in reduced precision. With `saturate`
// (the simulated backend's fp16, ops/runtime/device_mode.h) it also does what NpuSaturateFp16 does to an fp16
// value: in saturation mode an overflow becomes +-65504, a NaN 0, and an inf or NaN sets the float-status register.
//
// The library is built with TensorFlow's flags (no -mavx), so the hot loops are compiled for AVX2/F16C as
// well and chosen at run time when the CPU has them; the portable loops give the same bits.
#include <immintrin.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "ops/runtime/device_mode.h"
#include "ops/runtime/float_status.h"
#include "ops/runtime/no_throw.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/platform/threadpool.h"

namespace npu_bridge {

namespace {

constexpr uint32_t kExponent = 0x7f800000u;
constexpr uint32_t kMantissa = 0x007fffffu;
constexpr uint32_t kAbsolute = 0x7fffffffu;
constexpr float kFp16Max = 65504.0f;

uint32_t BitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float FloatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Rounds [begin, end) of `in` into `out`; each returns true when an output is inf or NaN.
using RoundFn = bool (*)(const float* in, float* out, int64_t begin, int64_t end);

bool HalfPortable(const float* in, float* out, int64_t begin, int64_t end) {
  uint32_t found = 0;
  for (int64_t i = begin; i < end; ++i) {
    out[i] = static_cast<float>(Eigen::half(in[i]));
    found |= (BitsOf(out[i]) & kExponent) == kExponent;
  }
  return found != 0;
}

// bfloat16 keeps the upper 16 bits: add half a unit (ties to even) and clear the rest; NaN stays a quiet NaN.
uint32_t Bfloat16Bits(uint32_t bits) {
  if ((bits & kAbsolute) > kExponent) return (bits | 0x00400000u) & 0xffff0000u;
  return (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
}

bool Bfloat16Portable(const float* in, float* out, int64_t begin, int64_t end) {
  uint32_t found = 0;
  for (int64_t i = begin; i < end; ++i) {
    const uint32_t bits = Bfloat16Bits(BitsOf(in[i]));
    out[i] = FloatOf(bits);
    found |= (bits & kExponent) == kExponent;
  }
  return found != 0;
}

__attribute__((target("avx2,f16c"))) bool HalfF16c(const float* in, float* out, int64_t begin, int64_t end) {
  const __m256i exponent = _mm256_set1_epi32(static_cast<int>(kExponent));
  __m256i found = _mm256_setzero_si256();
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 rounded = _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    _mm256_storeu_ps(out + i, rounded);
    const __m256i bits = _mm256_and_si256(_mm256_castps_si256(rounded), exponent);
    found = _mm256_or_si256(found, _mm256_cmpeq_epi32(bits, exponent));
  }
  return !_mm256_testz_si256(found, found) | HalfPortable(in, out, i, end);
}

__attribute__((target("avx2"))) bool Bfloat16Avx2(const float* in, float* out, int64_t begin, int64_t end) {
  const __m256i exponent = _mm256_set1_epi32(static_cast<int>(kExponent));
  const __m256i absolute = _mm256_set1_epi32(static_cast<int>(kAbsolute));
  const __m256i upper = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
  const __m256i half_unit = _mm256_set1_epi32(0x7fff);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i quiet = _mm256_set1_epi32(0x00400000);
  __m256i found = _mm256_setzero_si256();
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256i bits = _mm256_castps_si256(_mm256_loadu_ps(in + i));
    const __m256i tie = _mm256_and_si256(_mm256_srli_epi32(bits, 16), one);
    const __m256i rounded = _mm256_and_si256(_mm256_add_epi32(bits, _mm256_add_epi32(half_unit, tie)), upper);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, absolute), exponent);
    const __m256i result = _mm256_blendv_epi8(rounded, _mm256_and_si256(_mm256_or_si256(bits, quiet), upper), nan);
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(result));
    found = _mm256_or_si256(found, _mm256_cmpeq_epi32(_mm256_and_si256(result, exponent), exponent));
  }
  return !_mm256_testz_si256(found, found) | Bfloat16Portable(in, out, i, end);
}

RoundFn Choose(tensorflow::DataType to) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  static const bool f16c = avx2 && __builtin_cpu_supports("f16c");
  if (to == tensorflow::DT_HALF) return f16c ? HalfF16c : HalfPortable;
  return avx2 ? Bfloat16Avx2 : Bfloat16Portable;
}

// Saturates the infs of [begin, end) to +-65504 and turns the NaNs into 0, as Ascend's saturation mode does.
void Saturate(float* values, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const uint32_t bits = BitsOf(values[i]);
    if ((bits & kExponent) != kExponent) continue;
    values[i] = (bits & kMantissa) != 0 ? 0.0f : (values[i] > 0 ? kFp16Max : -kFp16Max);
  }
}

class RoundOp : public NpuOpKernel {
 public:
  explicit RoundOp(tensorflow::OpKernelConstruction* ctx) : NpuOpKernel(ctx) {
    Construct(ctx, [&] {
      tensorflow::DataType to;
      OP_REQUIRES_OK(ctx, ctx->GetAttr("to", &to));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("saturate", &saturate_));
      round_ = Choose(to);
    });
  }

  void ComputeSafely(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& x = ctx->input(0);
    tensorflow::Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const float* in = x.flat<float>().data();
    float* out = y->flat<float>().data();
    const bool saturates = saturate_ && DeviceMode::Saturates();
    std::atomic<bool> found{false};
    ctx->device()->tensorflow_cpu_worker_threads()->workers->ParallelFor(
        x.NumElements(), /*cost_per_unit=*/2, [&](int64_t begin, int64_t end) {
          if (round_(in, out, begin, end) && saturates) {
            found.store(true, std::memory_order_relaxed);
            Saturate(out, begin, end);
          }
        });
    if (found.load()) FloatStatus::SetOverflow();
  }

 private:
  RoundFn round_ = HalfPortable;
  bool saturate_ = false;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("NpuRound").Device(tensorflow::DEVICE_CPU), RoundOp);

}  // namespace npu_bridge
