// NpuOverflowCheck: passes its input through unchanged (no copy) and sets the emulated float-status register
// (ops/float_status.h) when the tensor holds an inf or NaN. The overflow-check rewrite pass inserts one after
// every floating-point op output; its attributes name the op and output it watches.
#include <atomic>
#include <cstdint>
#include <cstring>

#include "ops/float_status.h"
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/platform/threadpool.h"

namespace npu_bridge {

REGISTER_OP("NpuOverflowCheck")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("op_name: string")
    .Attr("op_type: string")
    .Attr("output_index: int")
    .SetShapeFn(tensorflow::shape_inference::UnchangedShape)
    .Doc("Identity that raises the emulated float-status register when x holds inf or NaN.");

namespace {

// inf and NaN are exactly the values whose exponent bits are all ones; testing the bits keeps the loop
// branch-free so the compiler can vectorize it.
template <typename Bits, Bits kExponentMask>
bool HasNonFinite(const void* data, int64_t begin, int64_t end) {
  const Bits* values = static_cast<const Bits*>(data);
  Bits found = 0;
  for (int64_t i = begin; i < end; ++i) found |= static_cast<Bits>((values[i] & kExponentMask) == kExponentMask);
  return found != 0;
}

using Scan = bool (*)(const void*, int64_t, int64_t);

Scan ScanFor(tensorflow::DataType dtype) {
  switch (dtype) {
    case tensorflow::DT_HALF: return &HasNonFinite<uint16_t, 0x7c00u>;
    case tensorflow::DT_BFLOAT16: return &HasNonFinite<uint16_t, 0x7f80u>;
    case tensorflow::DT_FLOAT: return &HasNonFinite<uint32_t, 0x7f800000u>;
    case tensorflow::DT_DOUBLE: return &HasNonFinite<uint64_t, 0x7ff0000000000000ull>;
    default: return nullptr;
  }
}

class OverflowCheckOp : public tensorflow::OpKernel {
 public:
  explicit OverflowCheckOp(tensorflow::OpKernelConstruction* ctx)
      : OpKernel(ctx), scan_(ScanFor(ctx->input_type(0))) {}

  void Compute(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& x = ctx->input(0);
    ctx->set_output(0, x);
    const int64_t n = x.NumElements();
    if (n == 0 || FloatStatus::Overflowed()) return;  // the register is sticky until cleared
    const void* data = x.tensor_data().data();
    std::atomic<bool> found{false};
    auto* pool = ctx->device()->tensorflow_cpu_worker_threads()->workers;
    pool->ParallelFor(n, /*cost_per_unit=*/1, [&](int64_t begin, int64_t end) {
      if (!found.load(std::memory_order_relaxed) && scan_(data, begin, end)) found = true;
    });
    if (found) FloatStatus::SetOverflow();
  }

 private:
  const Scan scan_;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("NpuOverflowCheck").Device(tensorflow::DEVICE_CPU), OverflowCheckOp);

}  // namespace npu_bridge
