// NpuLoopIteration: the iterations_per_loop pass (optimizers/passes/iterations_loop_pass.cc) puts one at the start
// of every loop iteration, and every per-step node of the iteration waits for it. It records the iteration of
// its run (LoopIterations, ops/runtime/dump_steps.h), so the dump and overflow kernels of that iteration -- in
// nested while loops too -- number their step as the run's first step plus the iteration.
#include "ops/runtime/dump_steps.h"
#include "ops/runtime/iterations_loop.h"
#include "ops/runtime/no_throw.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"

namespace npu_bridge {

class NpuLoopIterationOp : public NpuOpKernel {
 public:
  using NpuOpKernel::NpuOpKernel;

  bool IsExpensive() override { return false; }

  void ComputeSafely(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& iteration = ctx->input(0);
    OP_REQUIRES(ctx, tensorflow::TensorShapeUtils::IsScalar(iteration.shape()),
                absl::InvalidArgumentError("NpuLoopIteration: the iteration must be a scalar"));
    LoopIterations::Set(ctx->step_id(), iteration.scalar<int32_t>()());
  }
};

REGISTER_KERNEL_BUILDER(Name(kLoopIterationOp).Device(tensorflow::DEVICE_CPU), NpuLoopIterationOp);
REGISTER_KERNEL_BUILDER(Name(kLoopIterationOp).Device(tensorflow::DEVICE_GPU).HostMemory("iteration"),
                        NpuLoopIterationOp);

}  // namespace npu_bridge
