// Upstream's float-status ops over the emulated overflow register (ops/runtime/float_status.h):
//   NpuAllocFloatStatus() -> float[1] zeros          a status buffer
//   NpuGetFloatStatus(x) -> like x                   all ones if the register is set, else zeros
//   NpuClearFloatStatus(x) -> zeros like x           clears the register
//   NpuGetFloatStatusV2() -> int32[8]                all zero = no overflow since the last clear
//   NpuClearFloatStatusV2()                          clears the register
#include "ops/runtime/float_status.h"
#include "ops/runtime/no_throw.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"

namespace npu_bridge {

using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::Tensor;
using tensorflow::TensorShape;

namespace {

void FillFloat(OpKernelContext* ctx, const TensorShape& shape, float value) {
  Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
  out->flat<float>().setConstant(value);
}

class AllocFloatStatusOp : public NpuOpKernel {
 public:
  using NpuOpKernel::NpuOpKernel;
  void ComputeSafely(OpKernelContext* ctx) override { FillFloat(ctx, TensorShape({1}), 0.0f); }
};

class GetFloatStatusOp : public NpuOpKernel {
 public:
  using NpuOpKernel::NpuOpKernel;
  void ComputeSafely(OpKernelContext* ctx) override {
    FillFloat(ctx, ctx->input(0).shape(), FloatStatus::Overflowed() ? 1.0f : 0.0f);
  }
};

class ClearFloatStatusOp : public NpuOpKernel {
 public:
  using NpuOpKernel::NpuOpKernel;
  void ComputeSafely(OpKernelContext* ctx) override {
    FloatStatus::Clear();
    FillFloat(ctx, ctx->input(0).shape(), 0.0f);
  }
};

class GetFloatStatusV2Op : public NpuOpKernel {
 public:
  using NpuOpKernel::NpuOpKernel;
  void ComputeSafely(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({kStatusV2Size}), &out));
    out->flat<int32_t>().setZero();
    if (FloatStatus::Overflowed()) out->flat<int32_t>()(0) = 1;
  }
};

class ClearFloatStatusV2Op : public NpuOpKernel {
 public:
  using NpuOpKernel::NpuOpKernel;
  void ComputeSafely(OpKernelContext*) override { FloatStatus::Clear(); }
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("NpuAllocFloatStatus").Device(tensorflow::DEVICE_CPU), AllocFloatStatusOp);
REGISTER_KERNEL_BUILDER(Name("NpuGetFloatStatus").Device(tensorflow::DEVICE_CPU), GetFloatStatusOp);
REGISTER_KERNEL_BUILDER(Name("NpuClearFloatStatus").Device(tensorflow::DEVICE_CPU), ClearFloatStatusOp);
REGISTER_KERNEL_BUILDER(Name("NpuGetFloatStatusV2").Device(tensorflow::DEVICE_CPU), GetFloatStatusV2Op);
REGISTER_KERNEL_BUILDER(Name("NpuClearFloatStatusV2").Device(tensorflow::DEVICE_CPU), ClearFloatStatusV2Op);

}  // namespace npu_bridge
