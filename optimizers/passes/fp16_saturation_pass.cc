// fp16 on the simulated Ascend device (order 250, after the precision rules, before overflow checks): every
// fp16 value the graph produces -- the output of a Cast to float16 or of a computing op -- is followed by
// NpuSaturateFp16, and the precision pass's NpuRound through float16 saturates itself (attribute "saturate"),
// so that in saturation mode (npu_plugin.set_device_sat_mode(0), the Atlas training default) overflowing fp16
// values become +-65504 and set the float-status register (ops/kernels/fp16_saturation_kernels.cc).
#include <map>
#include <set>
#include <string>

#include "optimizers/graph/graph_edit.h"
#include "optimizers/graph/op_classes.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace {

using tensorflow::NodeDef;

class Fp16SaturationPass : public RewritePass {
 public:
  std::string name() const override { return "fp16_saturation"; }

  bool Enabled(const PassPlan& plan, const tensorflow::grappler::GrapplerItem&) const override {
    return plan.Get(contract::kPrecisionAscendFp16);
  }

  absl::Status Run(const PassPlan&, const tensorflow::grappler::GrapplerItem& item, tensorflow::GraphDef* graph,
                   bool* changed) override {
    GraphEditor editor(graph);
    const std::set<std::string> fetched = FetchedNodes(item);
    for (const std::string& name : editor.original_nodes()) {
      NodeDef* node = editor.Find(name);
      if (node->op() == kRoundOp && TypeAttr(*node, "to") == tensorflow::DT_HALF) {
        (*node->mutable_attr())["saturate"].set_b(true);
        *changed = true;
        continue;
      }
      tensorflow::DataTypeVector in_types, out_types;
      if (!NodeTypes(*node, &in_types, &out_types)) continue;
      const bool converts_to_fp16 = node->op() == "Cast" && TypeAttr(*node, "DstT") == tensorflow::DT_HALF &&
                                    TypeAttr(*node, "SrcT") != tensorflow::DT_HALF;
      if (!converts_to_fp16 && !IsComputingNode(*node, in_types)) continue;
      std::map<int, std::string> saturated;
      for (int o = 0; o < static_cast<int>(out_types.size()); ++o) {
        const std::string tensor = TensorName(node->name(), o);
        if (out_types[o] != tensorflow::DT_HALF) continue;
        const std::string saturate = editor.UniqueName(node->name() + "/npu_saturate_" + std::to_string(o));
        editor.AddInput(editor.AddNode(saturate, "NpuSaturateFp16", node->device()), tensor);
        editor.RedirectConsumers(tensor, saturate, saturate);
        saturated[o] = saturate;
        *changed = true;
      }
      if (!saturated.empty() && fetched.count(node->name())) {
        editor.ReplaceFetchedOutputs(node, out_types, saturated);
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(250, Fp16SaturationPass);

}  // namespace npu_bridge
