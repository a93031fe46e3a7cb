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
#include "ops/runtime/dump_layout.h"
#include "ops/runtime/dump_node_attrs.h"
#include "ops/runtime/dump_steps.h"
#include "ops/runtime/dump_writer.h"
#include "ops/runtime/no_throw.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor_util.h"

namespace npu_bridge {

namespace {

class DumpOp : public NpuOpKernel {
 public:
  explicit DumpOp(tensorflow::OpKernelConstruction* ctx) : NpuOpKernel(ctx) {
    Construct(ctx, [&] {
      OP_REQUIRES_OK(ctx, ReadDumpNodeAttrs(tensorflow::AttrSlice(ctx->def()), &attrs_));
      if (attrs_.dump_root.empty()) attrs_.dump_root = attrs_.dump_dir;  // a hand-made node: dump_dir as given
      num_outputs_ = attrs_.output_types.size();
      num_inputs_ = attrs_.input_types.size();
      forward_ = !attrs_.forwarded_types.empty();
      ref_inputs_.insert(attrs_.ref_inputs.begin(), attrs_.ref_inputs.end());
      OP_REQUIRES_OK(ctx, StepSelection::FromPairs(attrs_.dump_steps, &selection_));
      steps_ = ModelSteps::ForModel(attrs_.model_id);
    });
  }

  // Forwarding is all it does in most steps: run inline in the executor instead of on the thread pool.
  bool IsExpensive() override { return false; }

  void ComputeSafely(tensorflow::OpKernelContext* ctx) override {
    if (forward_) {
      for (int i = 0; i < num_outputs_; ++i) ctx->set_output(i, ctx->input(i));
    }
    const int64_t step = steps_->StepOf(ctx->step_id(), attrs_.steps_per_run, attrs_.in_iterations_loop);
    if (!selection_.Contains(step)) return;
    DumpRecord record;
    record.root = attrs_.dump_root;
    record.dir = StepDumpDir(attrs_.dump_dir, step);
    record.op_type = attrs_.op_type;
    record.op_name = attrs_.op_name;
    record.task_id = attrs_.task_id;
    record.timestamp = NextDumpTimestamp();
    record.stats = attrs_.stats;
    record.golden = attrs_.golden && attrs_.dump_outputs;
    if (attrs_.dump_outputs) {
      for (int i = 0; i < num_outputs_; ++i) {
        record.outputs.push_back(
            MakeDumpTensor(WrittenAs(i, Snapshot(ctx->input(i), attrs_.ref_outputs)), attrs_.data_format));
      }
    }
    for (int i = 0; i < num_inputs_; ++i) {
      const int k = num_outputs_ + i;
      record.inputs.push_back(
          MakeDumpTensor(WrittenAs(k, Snapshot(ctx->input(k), ref_inputs_.count(i) > 0)), attrs_.data_format));
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
    if (attrs_.written_as.empty() || !tensor.IsInitialized() || tensor.dtype() != tensorflow::DT_FLOAT) return tensor;
    const tensorflow::DataType type = attrs_.written_as[k];
    if (type != tensorflow::DT_HALF && type != tensorflow::DT_BFLOAT16) return tensor;
    tensorflow::Tensor converted(type, tensor.shape());
    if (type == tensorflow::DT_HALF) {
      converted.flat<Eigen::half>() = tensor.flat<float>().cast<Eigen::half>();
    } else {
      converted.flat<Eigen::bfloat16>() = tensor.flat<float>().cast<Eigen::bfloat16>();
    }
    return converted;
  }

  DumpNodeAttrs attrs_;
  int num_outputs_ = 0, num_inputs_ = 0;
  bool forward_ = false;
  std::set<int> ref_inputs_;
  StepSelection selection_;
  ModelSteps* steps_ = nullptr;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name(dump_node::kOp).Device(tensorflow::DEVICE_CPU), DumpOp);

}  // namespace npu_bridge
