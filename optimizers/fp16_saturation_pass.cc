// fp16 on the simulated Ascend device (order 250, after the precision rules, before overflow checks):
// every float32 -> float16 Cast becomes NpuCastToFp16 and every fp16 output of a computing op is followed by
// NpuSaturateFp16, so that in saturation mode (npu_plugin.set_device_sat_mode(0), the Atlas training
// default) overflowing fp16 values become +-65504 and set the float-status register (ops/fp16_ops.cc).
#include <string>

#include "optimizers/graph_edit.h"
#include "optimizers/op_classes.h"
#include "optimizers/precision_keys.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace {

using tensorflow::NodeDef;

tensorflow::DataType TypeAttr(const NodeDef& node, const std::string& attr) {
  auto it = node.attr().find(attr);
  return it == node.attr().end() ? tensorflow::DT_INVALID : it->second.type();
}

class Fp16SaturationPass : public RewritePass {
 public:
  std::string name() const override { return "fp16_saturation"; }

  bool Enabled(const PassOptions& options, const tensorflow::grappler::GrapplerItem&) const override {
    return options.GetBool(kAscendFp16Key, false);
  }

  absl::Status Run(const PassOptions&, const tensorflow::grappler::GrapplerItem&, tensorflow::GraphDef* graph,
                   bool* changed) override {
    GraphEditor editor(graph);
    for (const std::string& name : editor.original_nodes()) {
      NodeDef* node = editor.Find(name);
      if (node->op() == "Cast" && TypeAttr(*node, "SrcT") == tensorflow::DT_FLOAT &&
          TypeAttr(*node, "DstT") == tensorflow::DT_HALF) {
        node->set_op("NpuCastToFp16");
        node->mutable_attr()->clear();
        *changed = true;
        continue;
      }
      tensorflow::DataTypeVector in_types, out_types;
      if (!GraphEditor::Types(*node, &in_types, &out_types) || !IsComputingNode(*node, in_types)) continue;
      for (int o = 0; o < static_cast<int>(out_types.size()); ++o) {
        if (out_types[o] != tensorflow::DT_HALF) continue;
        const std::string saturate = node->name() + "/npu_saturate_" + std::to_string(o);
        if (editor.Find(saturate) != nullptr) continue;  // done by an earlier Optimize() call
        const std::string tensor = TensorName(node->name(), o);
        const auto consumers = editor.Consumers(tensor);
        NodeDef* added = editor.AddNode(saturate, "NpuSaturateFp16", node->device());
        editor.AddInput(added, tensor);
        for (auto& [consumer, position] : consumers) editor.Rewire(consumer, position, saturate);
        *changed = true;
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(250, Fp16SaturationPass);

}  // namespace npu_bridge
