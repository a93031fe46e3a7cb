// NPUInit / NPUShutdown: the ops behind npu_ops.initialize_system() / shutdown_system().
#include "ops/runtime/no_throw.h"
#include "ops/runtime/system_state.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"

namespace npu_bridge {

class NpuInitOp : public NpuOpKernel {
 public:
  explicit NpuInitOp(tensorflow::OpKernelConstruction* ctx) : NpuOpKernel(ctx) {
    Construct(ctx, [&] {
      // Without NpuOptimizer in the session config the attr is absent and defaults apply, as upstream.
      auto it = def().attr().find(kInitTokenAttr);
      if (it != def().attr().end()) init_token_ = it->second.s();
    });
  }

  void ComputeSafely(tensorflow::OpKernelContext*) override {
    if (SystemState::Get().Initialize(init_token_, "NPUInit", false)) {
      VLOG(1) << "npu_bridge: NPU system initialized";
    }
  }

 private:
  std::string init_token_;
};

class NpuShutdownOp : public NpuOpKernel {
 public:
  explicit NpuShutdownOp(tensorflow::OpKernelConstruction* ctx) : NpuOpKernel(ctx) {}

  void ComputeSafely(tensorflow::OpKernelContext*) override {
    if (SystemState::Get().Shutdown(/*force=*/false)) {
      VLOG(1) << "npu_bridge: NPU system shut down";
    }
  }
};

REGISTER_KERNEL_BUILDER(Name("NPUInit").Device(tensorflow::DEVICE_CPU), NpuInitOp);
REGISTER_KERNEL_BUILDER(Name("NPUInit").Device(tensorflow::DEVICE_GPU), NpuInitOp);
REGISTER_KERNEL_BUILDER(Name("NPUShutdown").Device(tensorflow::DEVICE_CPU), NpuShutdownOp);
REGISTER_KERNEL_BUILDER(Name("NPUShutdown").Device(tensorflow::DEVICE_GPU), NpuShutdownOp);

}  // namespace npu_bridge
