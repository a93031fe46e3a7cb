// NpuOverflowCheck: passes its input through unchanged (no copy) and sets the emulated float-status register
// (ops/runtime/float_status.h) when the tensor holds an inf or NaN. The overflow-check rewrite pass inserts one after
// every floating-point op output; its attributes name the op and output it watches.
//
// With `report` set (enable_dump_debug) every run is scanned -- not only until the register is set -- and an
// overflow is also recorded the way Ascend's overflow detection does: an Opdebug record and a dump of the op's
// inputs and outputs (`op_io`) in {dump_dir}/{step}, through the dump writer. `fp16_saturation` (the
// simulated Ascend backend) also counts half values at +-65504 as overflow: in the device's saturation mode
// an fp16 overflow does not give inf but the largest finite value.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ops/runtime/dump_format.h"
#include "ops/runtime/dump_layout.h"
#include "ops/runtime/dump_steps.h"
#include "ops/runtime/dump_writer.h"
#include "ops/runtime/float_status.h"
#include "ops/runtime/iterations_loop.h"
#include "ops/runtime/no_throw.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor_util.h"
#include "tensorflow/core/platform/threadpool.h"

namespace npu_bridge {

namespace {

constexpr uint16_t kHalfMagnitude = 0x7fffu;
constexpr uint16_t kHalfMaxFinite = 0x7bffu;  // 65504

// inf and NaN are exactly the values whose exponent bits are all ones; testing the bits keeps the loop
// branch-free so the compiler can vectorize it.
template <typename Bits, Bits kExponentMask>
bool HasNonFinite(const void* data, int64_t begin, int64_t end) {
  const Bits* values = static_cast<const Bits*>(data);
  Bits found = 0;
  for (int64_t i = begin; i < end; ++i) found |= static_cast<Bits>((values[i] & kExponentMask) == kExponentMask);
  return found != 0;
}

// Half values at or beyond 65504 in magnitude, inf and NaN included.
bool HasSaturatedHalf(const void* data, int64_t begin, int64_t end) {
  const uint16_t* values = static_cast<const uint16_t*>(data);
  uint16_t found = 0;
  for (int64_t i = begin; i < end; ++i) found |= static_cast<uint16_t>((values[i] & kHalfMagnitude) >= kHalfMaxFinite);
  return found != 0;
}

using Scan = bool (*)(const void*, int64_t, int64_t);

Scan ScanFor(tensorflow::DataType dtype, bool fp16_saturation) {
  switch (dtype) {
    case tensorflow::DT_HALF:
      return fp16_saturation ? &HasSaturatedHalf : &HasNonFinite<uint16_t, 0x7c00u>;
    case tensorflow::DT_BFLOAT16:
      return &HasNonFinite<uint16_t, 0x7f80u>;
    case tensorflow::DT_FLOAT:
      return &HasNonFinite<uint32_t, 0x7f800000u>;
    case tensorflow::DT_DOUBLE:
      return &HasNonFinite<uint64_t, 0x7ff0000000000000ull>;
    default:
      return nullptr;
  }
}

template <typename T>
uint64_t KindsOf(const tensorflow::Tensor& x, bool fp16_saturation) {
  uint64_t kinds = 0;
  const auto values = x.flat<T>();
  for (int64_t i = 0; i < values.size(); ++i) {
    const double v = static_cast<double>(values(i));
    if (std::isnan(v))
      kinds |= kOverflowNaN;
    else if (std::isinf(v))
      kinds |= kOverflowInf;
    else if (fp16_saturation && std::fabs(v) >= 65504.0)
      kinds |= kOverflowFp16Saturated;
  }
  return kinds;
}

// The status bits of an overflowing tensor (kOverflow* in dump_format.h).
uint64_t OverflowKinds(const tensorflow::Tensor& x, bool fp16_saturation) {
  switch (x.dtype()) {
    case tensorflow::DT_HALF:
      return KindsOf<Eigen::half>(x, fp16_saturation);
    case tensorflow::DT_BFLOAT16:
      return KindsOf<Eigen::bfloat16>(x, false);
    case tensorflow::DT_FLOAT:
      return KindsOf<float>(x, false);
    case tensorflow::DT_DOUBLE:
      return KindsOf<double>(x, false);
    default:
      return 0;
  }
}

class OverflowCheckOp : public NpuOpKernel {
 public:
  explicit OverflowCheckOp(tensorflow::OpKernelConstruction* ctx) : NpuOpKernel(ctx) {
    Construct(ctx, [&] {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("report", &report_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("fp16_saturation", &fp16_saturation_));
      scan_ = ScanFor(ctx->input_type(0), fp16_saturation_);
      if (!report_) return;
      int64_t model_id = 0;
      OP_REQUIRES_OK(ctx, ctx->GetAttr("op_name", &op_name_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("op_type", &op_type_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("num_op_inputs", &num_op_inputs_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dump_dir", &dump_dir_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dump_root", &dump_root_));
      if (dump_root_.empty()) dump_root_ = dump_dir_;  // a hand-made node: its dump_dir is taken as given
      OP_REQUIRES_OK(ctx, ctx->GetAttr("model_id", &model_id));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("task_id", &task_id_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr(kStepsPerRunAttr, &steps_per_run_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr(kInLoopAttr, &in_loop_));
      model_id_ = model_id;
      steps_ = ModelSteps::ForModel(model_id);
    });
  }

  void ComputeSafely(tensorflow::OpKernelContext* ctx) override {
    const tensorflow::Tensor& x = ctx->input(0);
    ctx->set_output(0, x);
    // Report mode numbers every run, overflowing or not, so steps count Session.run calls (and the iterations
    // of an iterations_per_loop loop).
    const int64_t step = report_ ? steps_->StepOf(ctx->step_id(), steps_per_run_, in_loop_) : 0;
    const int64_t n = x.NumElements();
    if (n == 0 || (!report_ && FloatStatus::Overflowed())) return;  // the register is sticky until cleared
    const void* data = x.tensor_data().data();
    std::atomic<bool> found{false};
    auto* pool = ctx->device()->tensorflow_cpu_worker_threads()->workers;
    pool->ParallelFor(n, /*cost_per_unit=*/1, [&](int64_t begin, int64_t end) {
      if (!found.load(std::memory_order_relaxed) && scan_(data, begin, end)) found = true;
    });
    if (!found) return;
    FloatStatus::SetOverflow();
    if (report_ && steps_->FirstReport(step, task_id_)) Report(ctx, x, step);
  }

 private:
  void Report(tensorflow::OpKernelContext* ctx, const tensorflow::Tensor& x, int64_t step) {
    DumpRecord record;
    record.root = dump_root_;
    record.dir = StepDumpDir(dump_dir_, step);
    record.op_type = op_type_;
    record.op_name = op_name_;
    record.task_id = task_id_;
    record.overflow = true;
    record.model_id = model_id_;
    record.step = step;
    record.overflow_status = OverflowKinds(x, fp16_saturation_);
    record.opdebug_timestamp = NextDumpTimestamp();
    record.timestamp = NextDumpTimestamp();
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      // Copied: a variable the op read may be updated in place before the writer gets to it. Overflows are
      // rare, so the copy costs nothing in steps without one. Resource handles and variants have no bytes to
      // dump (and no deep copy).
      const tensorflow::Tensor& io = ctx->input(i);
      const bool copy = io.IsInitialized() && HasRawBytes(io.dtype());
      DumpTensor tensor = MakeDumpTensor(copy ? tensorflow::tensor::DeepCopy(io) : io, "");
      (i - 1 < num_op_inputs_ ? record.inputs : record.outputs).push_back(std::move(tensor));
    }
    DumpWriter::Get().Submit(std::move(record));
  }

  Scan scan_ = nullptr;
  bool report_ = false, fp16_saturation_ = false, in_loop_ = false;
  std::string op_name_, op_type_, dump_dir_, dump_root_;
  int64_t num_op_inputs_ = 0, model_id_ = 0, task_id_ = 0, steps_per_run_ = 1;
  ModelSteps* steps_ = nullptr;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("NpuOverflowCheck").Device(tensorflow::DEVICE_CPU), OverflowCheckOp);

}  // namespace npu_bridge
