// Kernels of the same-host collectives (ops/registration/shm_collective_ops.cc): asynchronous, they validate,
// place the output (the input's buffer when TensorFlow allows), and hand the work to the group's progress
// thread (ops/runtime/shm_engine.h), which calls `done`. No executor thread waits for a peer.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/runtime/no_throw.h"
#include "ops/runtime/shm_engine.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/tensor_shape.h"

namespace npu_bridge {

namespace {

absl::Status KindOf(const std::string& type, shm::Kind* kind) {
  if (type == "HcomShmAllReduce") {
    *kind = shm::kAllReduce;
  } else if (type == "HcomShmAllGather") {
    *kind = shm::kAllGather;
  } else if (type == "HcomShmReduceScatter") {
    *kind = shm::kReduceScatter;
  } else if (type == "HcomShmAllToAll") {
    *kind = shm::kAllToAll;
  } else if (type == "HcomShmBroadcastSend" || type == "HcomShmBroadcastRecv") {
    *kind = shm::kBroadcast;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("no shared-memory collective kernel for op type ", type));
  }
  return absl::OkStatus();
}

// One kernel for every HcomShm* op; the op type says which collective it is.
class ShmCollectiveKernel : public NpuAsyncOpKernel {
 public:
  explicit ShmCollectiveKernel(tensorflow::OpKernelConstruction* ctx) : NpuAsyncOpKernel(ctx) {
    const absl::Status status = NoThrow("creating op " + name(), [&]() -> absl::Status {
      TF_RETURN_IF_ERROR(KindOf(type_string(), &kind_));
      int64_t group_key = 0;
      TF_RETURN_IF_ERROR(ctx->GetAttr("group_key", &group_key));
      spec_.group_key = static_cast<uint64_t>(group_key);
      TF_RETURN_IF_ERROR(ctx->GetAttr("slots", &spec_.slots));
      TF_RETURN_IF_ERROR(ctx->GetAttr("world_ranks", &spec_.world_ranks));
      TF_RETURN_IF_ERROR(ctx->GetAttr("group_rank", &spec_.group_rank));
      TF_RETURN_IF_ERROR(ctx->GetAttr("local_size", &spec_.local_size));
      TF_RETURN_IF_ERROR(ctx->GetAttr("instance_key", &instance_key_));
      TF_RETURN_IF_ERROR(ctx->GetAttr("timeout_seconds", &timeout_seconds_));
      if (spec_.slots.size() != spec_.world_ranks.size() || spec_.group_rank >= static_cast<int>(spec_.slots.size())) {
        return absl::InvalidArgumentError(absl::StrCat("op ", name(), ": slots, world_ranks and group_rank disagree"));
      }
      if (kind_ == shm::kAllReduce || kind_ == shm::kReduceScatter) {
        std::string reduction;
        TF_RETURN_IF_ERROR(ctx->GetAttr("reduction", &reduction));
        TF_RETURN_IF_ERROR(shm::ParseReduction(reduction, &reduction_));
      }
      root_ = spec_.group_rank;
      if (ctx->HasAttr("root")) TF_RETURN_IF_ERROR(ctx->GetAttr("root", &root_));
      if (root_ >= static_cast<int>(spec_.slots.size())) {
        return absl::InvalidArgumentError(absl::StrCat("op ", name(), ": root ", root_, " is not a group rank"));
      }
      if (ctx->HasAttr("shape")) TF_RETURN_IF_ERROR(ctx->GetAttr("shape", &shape_));
      return absl::OkStatus();
    });
    if (!status.ok()) ctx->CtxFailure(__FILE__, __LINE__, status);
  }

  absl::Status ComputeAsyncSafely(tensorflow::OpKernelContext* ctx, DoneCallback done, bool* handed_over) override {
    shm::Communicator* communicator = nullptr;
    TF_RETURN_IF_ERROR(shm::Communicator::Get(spec_, &communicator));
    shm::Work work;
    TF_RETURN_IF_ERROR(Prepare(ctx, &work));
    tensorflow::CancellationManager* cancellation = ctx->cancellation_manager();
    tensorflow::CancellationToken token = tensorflow::CancellationManager::kInvalidToken;
    if (cancellation != nullptr) {
      token = cancellation->get_cancellation_token();
      if (!cancellation->RegisterCallback(token, [communicator] { communicator->Cancel(); })) {
        return absl::CancelledError(absl::StrCat("op ", name(), ": the step was cancelled before it started"));
      }
    }
    work.done = [ctx, done, cancellation, token](const absl::Status& result) {
      if (cancellation != nullptr) cancellation->DeregisterCallback(token);
      if (!result.ok()) ctx->SetStatus(result);
      done();
    };
    *handed_over = true;
    communicator->Enqueue(std::move(work));
    return absl::OkStatus();
  }

 private:
  // Fills in what moves where, and allocates the output.
  absl::Status Prepare(tensorflow::OpKernelContext* ctx, shm::Work* work) {
    const int members = static_cast<int>(spec_.slots.size());
    work->kind = kind_;
    work->reduction = reduction_;
    work->root = root_;
    work->instance_key = instance_key_;
    work->timeout_seconds = timeout_seconds_;
    tensorflow::Tensor* output = nullptr;
    if (kind_ == shm::kBroadcast && spec_.group_rank != root_) {
      work->dtype = ctx->expected_output_dtype(0);
      TF_RETURN_IF_ERROR(ctx->allocate_output(0, shape_, &output));
      work->bytes = output->TotalBytes();
      work->output = const_cast<char*>(output->tensor_data().data());
      return absl::OkStatus();
    }
    const tensorflow::Tensor& input = ctx->input(0);
    work->dtype = input.dtype();
    work->bytes = input.TotalBytes();
    work->input = input.tensor_data().data();
    if (kind_ == shm::kAllGather) {
      if (input.dims() < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("op ", name(), ": allgather needs a tensor of rank >= 1, got a scalar"));
      }
      tensorflow::TensorShape shape = input.shape();
      shape.set_dim(0, shape.dim_size(0) * members);
      TF_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &output));
    } else if (kind_ == shm::kReduceScatter) {
      TF_RETURN_IF_ERROR(CheckSliced(input, members, "reduce_scatter"));
      tensorflow::TensorShape shape = input.shape();
      shape.set_dim(0, shape.dim_size(0) / members);
      TF_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &output));
    } else if (kind_ == shm::kBroadcast) {
      // The sender's output is its input (tensors are immutable): it copies what it sends only into the segment.
      ctx->set_output(0, input);
      work->output = const_cast<char*>(work->input);
      return absl::OkStatus();
    } else {
      // An all-to-all may write into its input: each round reads every slice's piece before it writes it.
      if (kind_ == shm::kAllToAll) TF_RETURN_IF_ERROR(CheckSliced(input, members, "all_to_all"));
      TF_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output({0}, 0, input.shape(), &output));
    }
    work->output = const_cast<char*>(output->tensor_data().data());
    return absl::OkStatus();
  }

  absl::Status CheckSliced(const tensorflow::Tensor& input, int members, const char* what) const {
    if (input.dims() < 1 || input.dim_size(0) % members != 0) {
      return absl::InvalidArgumentError(absl::StrCat("op ", name(), ": ", what, " needs dimension 0 divisible by the ",
                                                     members, " members, got shape ", input.shape().DebugString()));
    }
    return absl::OkStatus();
  }

  shm::Kind kind_ = shm::kAllReduce;
  shm::GroupSpec spec_;
  int64_t instance_key_ = 0;
  float timeout_seconds_ = 0;
  shm::Reduction reduction_ = shm::kSum;
  int root_ = 0;
  tensorflow::TensorShape shape_;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("HcomShmAllReduce").Device(tensorflow::DEVICE_CPU), ShmCollectiveKernel);
REGISTER_KERNEL_BUILDER(Name("HcomShmAllGather").Device(tensorflow::DEVICE_CPU), ShmCollectiveKernel);
REGISTER_KERNEL_BUILDER(Name("HcomShmReduceScatter").Device(tensorflow::DEVICE_CPU), ShmCollectiveKernel);
REGISTER_KERNEL_BUILDER(Name("HcomShmAllToAll").Device(tensorflow::DEVICE_CPU), ShmCollectiveKernel);
REGISTER_KERNEL_BUILDER(Name("HcomShmBroadcastSend").Device(tensorflow::DEVICE_CPU), ShmCollectiveKernel);
REGISTER_KERNEL_BUILDER(Name("HcomShmBroadcastRecv").Device(tensorflow::DEVICE_CPU), ShmCollectiveKernel);

}  // namespace npu_bridge
