// NpuIterationsLoopGuard: a control input of every IterationOp. The iterations loop pass removes it when it
// builds the loop; if it ever runs, no loop was built, and one sess.run would silently perform one training
// step instead of iterations_per_loop steps. It fails instead, with the reason in its `message` attr (the
// Python default, or what the pass found wrong).
#include "ops/runtime/iterations_loop.h"
#include "ops/runtime/no_throw.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"

namespace npu_bridge {

class NpuIterationsLoopGuardOp : public NpuOpKernel {
 public:
  explicit NpuIterationsLoopGuardOp(tensorflow::OpKernelConstruction* ctx) : NpuOpKernel(ctx) {
    Construct(ctx, [&] { OP_REQUIRES_OK(ctx, ctx->GetAttr(kGuardMessageAttr, &message_)); });
  }

  void ComputeSafely(tensorflow::OpKernelContext* ctx) override {
    ctx->SetStatus(absl::FailedPreconditionError(message_));
  }

 private:
  std::string message_;
};

REGISTER_KERNEL_BUILDER(Name("NpuIterationsLoopGuard").Device(tensorflow::DEVICE_CPU), NpuIterationsLoopGuardOp);
REGISTER_KERNEL_BUILDER(Name("NpuIterationsLoopGuard").Device(tensorflow::DEVICE_GPU), NpuIterationsLoopGuardOp);

}  // namespace npu_bridge
