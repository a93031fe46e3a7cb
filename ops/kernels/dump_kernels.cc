// NpuDump: the data-dump kernel the dump rewrite pass (optimizers/passes/dump_pass.cc) puts after every dumped op.
// It takes the op's outputs (and, for dump_mode input/all, its inputs) and usually forwards the outputs without
// copying: the op's readers, and the forwarder of an op a run fetches, read them from the NpuDump
// (optimizers/graph/instrumentation.h, FollowOps), so it runs whenever the op's results are used or fetched. In a step
// that dump_step selects it hands the tensors to the dump writer; in other steps it only forwards. Inside an
// iterations_per_loop loop every iteration is a step of its own.
#include <set>
#include <string>
#include <vector>

#include "ops/runtime/dump_format.h"
#include "ops/runtime/dump_steps.h"
#include "ops/runtime/dump_writer.h"
#include "ops/runtime/no_throw.h"
#include "optimizers/iterations_loop.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor_util.h"

namespace npu_bridge {

namespace {

class DumpOp : public NpuOpKernel {
 public:
  explicit DumpOp(tensorflow::OpKernelConstruction* ctx) : NpuOpKernel(ctx) {
    Construct(ctx, [&] {
      tensorflow::DataTypeVector outputs, forwarded, inputs;
      std::vector<int64_t> dump_steps;
      int64_t model_id = 0;
      std::vector<int32_t> ref_inputs;
      OP_REQUIRES_OK(ctx, ctx->GetAttr("Tout", &outputs));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("Tin", &inputs));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("Tfwd", &forwarded));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("op_name", &op_name_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("op_type", &op_type_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dump_dir", &dump_dir_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dump_root", &dump_root_));
      if (dump_root_.empty()) dump_root_ = dump_dir_;  // a hand-made node: its dump_dir is taken as given
      OP_REQUIRES_OK(ctx, ctx->GetAttr("model_id", &model_id));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("task_id", &task_id_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dump_steps", &dump_steps));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dump_outputs", &dump_outputs_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &data_format_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("ref_inputs", &ref_inputs));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("ref_outputs", &ref_outputs_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("Tdump", &written_as_));
      OP_REQUIRES(ctx, written_as_.empty() || written_as_.size() == outputs.size() + inputs.size(),
                  tensorflow::errors::InvalidArgument("NpuDump: Tdump must be empty or name every dumped tensor"));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("stats", &stats_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("golden", &golden_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr(kStepsPerRunAttr, &steps_per_run_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr(kInLoopAttr, &in_loop_));
      OP_REQUIRES(ctx, forwarded.empty() || forwarded == outputs,
                  tensorflow::errors::InvalidArgument("NpuDump: Tfwd must be empty or equal to Tout"));
      num_outputs_ = outputs.size();
      num_inputs_ = inputs.size();
      forward_ = !forwarded.empty();
      ref_inputs_.insert(ref_inputs.begin(), ref_inputs.end());
      OP_REQUIRES_OK(ctx, StepSelection::FromPairs(dump_steps, &selection_));
      steps_ = ModelSteps::ForModel(model_id);
    });
  }

  // Forwarding is all it does in most steps: run inline in the executor instead of on the thread pool.
  bool IsExpensive() override { return false; }

  void ComputeSafely(tensorflow::OpKernelContext* ctx) override {
    if (forward_) {
      for (int i = 0; i < num_outputs_; ++i) ctx->set_output(i, ctx->input(i));
    }
    const int64_t step = steps_->StepOf(ctx->step_id(), steps_per_run_, in_loop_);
    if (!selection_.Contains(step)) return;
    DumpRecord record;
    record.root = dump_root_;
    record.dir = dump_dir_ + "/" + std::to_string(step);
    record.op_type = op_type_;
    record.op_name = op_name_;
    record.task_id = task_id_;
    record.timestamp = NextDumpTimestamp();
    record.stats = stats_;
    record.golden = golden_ && dump_outputs_;
    if (dump_outputs_) {
      for (int i = 0; i < num_outputs_; ++i) {
        record.outputs.push_back(MakeDumpTensor(WrittenAs(i, Snapshot(ctx->input(i), ref_outputs_)), data_format_));
      }
    }
    for (int i = 0; i < num_inputs_; ++i) {
      const int k = num_outputs_ + i;
      record.inputs.push_back(
          MakeDumpTensor(WrittenAs(k, Snapshot(ctx->input(k), ref_inputs_.count(i) > 0)), data_format_));
    }
    DumpWriter::Get().Submit(std::move(record));
  }

 private:
  static tensorflow::Tensor Snapshot(const tensorflow::Tensor& tensor, bool is_reference) {
    return is_reference && tensor.IsInitialized() && HasRawBytes(tensor.dtype()) ? tensorflow::tensor::DeepCopy(tensor)
                                                                                 : tensor;
  }

  // Dumped tensor k (outputs, then inputs) in the type Tdump gives it: float32 as float16 or bfloat16 (a new
  // tensor, so no copy of a reference variable's buffer is needed); other tensors as they are.
  tensorflow::Tensor WrittenAs(int k, const tensorflow::Tensor& tensor) const {
    if (written_as_.empty() || !tensor.IsInitialized() || tensor.dtype() != tensorflow::DT_FLOAT) return tensor;
    const tensorflow::DataType type = written_as_[k];
    if (type != tensorflow::DT_HALF && type != tensorflow::DT_BFLOAT16) return tensor;
    tensorflow::Tensor converted(type, tensor.shape());
    if (type == tensorflow::DT_HALF) {
      converted.flat<Eigen::half>() = tensor.flat<float>().cast<Eigen::half>();
    } else {
      converted.flat<Eigen::bfloat16>() = tensor.flat<float>().cast<Eigen::bfloat16>();
    }
    return converted;
  }

  std::string op_name_, op_type_, dump_dir_, dump_root_, data_format_;
  tensorflow::DataTypeVector written_as_;
  int64_t task_id_ = 0, steps_per_run_ = 1;
  int num_outputs_ = 0, num_inputs_ = 0;
  bool forward_ = false, dump_outputs_ = true, ref_outputs_ = false, stats_ = false, golden_ = true, in_loop_ = false;
  std::set<int> ref_inputs_;
  StepSelection selection_;
  ModelSteps* steps_ = nullptr;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("NpuDump").Device(tensorflow::DEVICE_CPU), DumpOp);

}  // namespace npu_bridge
