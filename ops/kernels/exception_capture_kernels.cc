// Exception dump (enable_exception_dump=1). The exception-capture rewrite pass brackets every op: before it
// runs, NpuExceptionCapture holds references to its inputs in a slot named "{session id}/{node name}";
// once it has run, NpuExceptionRelease drops them. When the op fails, its slot still holds the inputs, and
// the session's run hook asks npu_bridge_exception_dump (below) to write them in Ascend's dump format.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ops/runtime/c_api.h"
#include "ops/runtime/dump_format.h"
#include "ops/runtime/dump_writer.h"
#include "ops/runtime/json_text.h"
#include "ops/runtime/no_throw.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"

namespace npu_bridge {

namespace {

struct OpInfo {
  std::string op_name, op_type, dump_dir, dump_root, data_format;
  int64_t task_id = 0;
};

struct Held {
  std::shared_ptr<const OpInfo> op;
  std::vector<tensorflow::Tensor> inputs;
};

// Slots sharded by name so parallel ops rarely contend.
class Slots {
 public:
  static Slots& Get() {
    static Slots* slots = new Slots();
    return *slots;
  }
  void Put(const std::string& slot, std::shared_ptr<const Held> held) {
    Shard& shard = ShardOf(slot);
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.held[slot] = std::move(held);
  }
  void Drop(const std::string& slot) {
    Shard& shard = ShardOf(slot);
    std::lock_guard<std::mutex> lock(shard.mu);
    auto it = shard.held.find(slot);
    if (it != shard.held.end()) it->second.reset();
  }
  std::shared_ptr<const Held> Take(const std::string& slot) {
    Shard& shard = ShardOf(slot);
    std::lock_guard<std::mutex> lock(shard.mu);
    auto it = shard.held.find(slot);
    if (it == shard.held.end()) return nullptr;
    return std::move(it->second);
  }

 private:
  static constexpr int kShards = 16;
  struct Shard {
    std::mutex mu;
    std::map<std::string, std::shared_ptr<const Held>> held;
  };
  Shard& ShardOf(const std::string& slot) { return shards_[std::hash<std::string>()(slot) % kShards]; }
  Shard shards_[kShards];
};

class ExceptionCaptureOp : public NpuOpKernel {
 public:
  explicit ExceptionCaptureOp(tensorflow::OpKernelConstruction* ctx) : NpuOpKernel(ctx) {
    Construct(ctx, [&] {
      auto info = std::make_shared<OpInfo>();
      OP_REQUIRES_OK(ctx, ctx->GetAttr("slot", &slot_));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("op_name", &info->op_name));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("op_type", &info->op_type));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dump_dir", &info->dump_dir));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dump_root", &info->dump_root));
      if (info->dump_root.empty()) info->dump_root = info->dump_dir;  // a hand-made node: taken as given
      OP_REQUIRES_OK(ctx, ctx->GetAttr("task_id", &info->task_id));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &info->data_format));
      info_ = std::move(info);
    });
  }

  bool IsExpensive() override { return false; }  // a few reference counts: run inline

  void ComputeSafely(tensorflow::OpKernelContext* ctx) override {
    auto held = std::make_shared<Held>();
    held->op = info_;
    held->inputs.reserve(ctx->num_inputs());
    for (int i = 0; i < ctx->num_inputs(); ++i) held->inputs.push_back(ctx->input(i));
    Slots::Get().Put(slot_, std::move(held));
  }

 private:
  std::string slot_;
  std::shared_ptr<const OpInfo> info_;
};

class ExceptionReleaseOp : public NpuOpKernel {
 public:
  explicit ExceptionReleaseOp(tensorflow::OpKernelConstruction* ctx) : NpuOpKernel(ctx) {
    Construct(ctx, [&] { OP_REQUIRES_OK(ctx, ctx->GetAttr("slot", &slot_)); });
  }
  bool IsExpensive() override { return false; }
  void ComputeSafely(tensorflow::OpKernelContext*) override { Slots::Get().Drop(slot_); }

 private:
  std::string slot_;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("NpuExceptionCapture").Device(tensorflow::DEVICE_CPU), ExceptionCaptureOp);
REGISTER_KERNEL_BUILDER(Name("NpuExceptionRelease").Device(tensorflow::DEVICE_CPU), ExceptionReleaseOp);

}  // namespace npu_bridge

// Writes the inputs held for `slot` (the op failed before releasing them) and returns JSON
// {"path": dump file, "op_name", "op_type", "inputs": count} or {"error": text}. The slot is emptied, so a
// second call reports that nothing is held.
extern "C" size_t npu_bridge_exception_dump_json(const char* slot, char* buf, size_t len) {
  return npu_bridge::NoThrowValue<size_t>(0, [&]() -> size_t {
    using npu_bridge::JsonQuote;
    std::shared_ptr<const npu_bridge::Held> held = npu_bridge::Slots::Get().Take(slot ? slot : "");
    std::string json;
    if (held == nullptr) {
      json = "{\"error\":" + JsonQuote(std::string("no inputs are held for ") + (slot ? slot : "")) + "}";
    } else {
      const npu_bridge::OpInfo& op = *held->op;
      npu_bridge::DumpRecord record;
      record.root = op.dump_root;
      record.dir = op.dump_dir;
      record.op_name = op.op_name;
      record.op_type = op.op_type;
      record.task_id = op.task_id;
      record.timestamp = npu_bridge::NextDumpTimestamp();
      for (const tensorflow::Tensor& input : held->inputs) {
        record.inputs.push_back(npu_bridge::MakeDumpTensor(input, op.data_format));
      }
      absl::StatusOr<std::string> path = npu_bridge::DumpWriter::Get().WriteNow(record);
      json = path.ok() ? "{\"path\":" + JsonQuote(*path) + ",\"op_name\":" + JsonQuote(op.op_name) +
                             ",\"op_type\":" + JsonQuote(op.op_type) +
                             ",\"inputs\":" + std::to_string(held->inputs.size()) + "}"
                       : "{\"error\":" + JsonQuote(std::string(path.status().message())) + "}";
    }
    return npu_bridge::CopyToBuffer(json, buf, len);
  });
}
