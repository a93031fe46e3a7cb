// `Unique` under the kernel label "parallel": scripts for Ascend recommendation models select upstream's AI CPU
// Unique kernel with `_kernel_label_map({"Unique": "parallel"})`. Here it computes what TensorFlow's Unique
// computes -- y holds the distinct values of the 1-D x in order of first appearance, idx[i] is the position
// of x[i] in y -- so labelled graphs run unchanged.
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/runtime/no_throw.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor_shape.h"

namespace npu_bridge {
namespace {

template <typename T, typename Index>
class ParallelLabelUniqueOp : public NpuOpKernel {
 public:
  using NpuOpKernel::NpuOpKernel;

 protected:
  void ComputeSafely(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, tensorflow::TensorShapeUtils::IsVector(input.shape()),
                absl::InvalidArgumentError("Unique: x must be a vector, got shape " + input.shape().DebugString()));
    const int64_t n = input.NumElements();
    OP_REQUIRES(
        ctx, n <= static_cast<int64_t>(std::numeric_limits<Index>::max()),
        absl::InvalidArgumentError("Unique: x has " + std::to_string(n) + " elements, more than out_idx can index"));
    auto x = input.vec<T>();
    tensorflow::Tensor* idx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, input.shape(), &idx));
    auto index = idx->vec<Index>();
    std::unordered_map<T, Index> position;
    position.reserve(n);
    std::vector<T> distinct;
    for (int64_t i = 0; i < n; ++i) {
      auto inserted = position.emplace(x(i), static_cast<Index>(distinct.size()));
      if (inserted.second) distinct.push_back(x(i));
      index(i) = inserted.first->second;
    }
    tensorflow::Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, tensorflow::TensorShape({static_cast<int64_t>(distinct.size())}), &y));
    auto values = y->vec<T>();
    for (size_t k = 0; k < distinct.size(); ++k) values(k) = distinct[k];
  }
};

#define NPU_BRIDGE_REGISTER_PARALLEL_UNIQUE(T, Index)            \
  REGISTER_KERNEL_BUILDER(Name("Unique")                         \
                              .Device(tensorflow::DEVICE_CPU)    \
                              .Label("parallel")                 \
                              .TypeConstraint<T>("T")            \
                              .TypeConstraint<Index>("out_idx"), \
                          ParallelLabelUniqueOp<T, Index>)

NPU_BRIDGE_REGISTER_PARALLEL_UNIQUE(int32_t, int32_t);
NPU_BRIDGE_REGISTER_PARALLEL_UNIQUE(int32_t, int64_t);
NPU_BRIDGE_REGISTER_PARALLEL_UNIQUE(int64_t, int32_t);
NPU_BRIDGE_REGISTER_PARALLEL_UNIQUE(int64_t, int64_t);

#undef NPU_BRIDGE_REGISTER_PARALLEL_UNIQUE

}  // namespace
}  // namespace npu_bridge
