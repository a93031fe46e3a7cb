// Ascend implementation modes (op_select_implmode, optypelist_for_implmode, op_precision_mode) on the
// simulated Ascend backend (order 190, before the precision rules so the ops it adds are rounded too).
// The Python precision step resolves, per op type and node name, high_precision or high_performance; this
// pass rewrites the ops whose Ascend implementations differ numerically in a documented way:
//   LayerNorm (npu_aicore_ops.layer_norm marks its Rsqrt with _npu_impl_op="LayerNorm"):
//     high_performance computes rsqrt(v) as exp(-0.5 * log(v)) in the op's dtype.
//   SoftmaxCrossEntropyWithLogits with float16 inputs:
//     high_performance skips the max subtraction, so exp overflows fp16 for logits above ~11.1.
// high_precision keeps TensorFlow's implementation (which is the accurate one) for both.
#include <string>
#include <unordered_map>
#include <vector>

#include "optimizers/graph/graph_edit.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace {

using tensorflow::DataType;
using tensorflow::NodeDef;

constexpr char kHighPerformance[] = "high_performance";

class ImplModes {
 public:
  absl::Status Build(const std::vector<tensorflow::NameAttrList>& records) {
    for (const tensorflow::NameAttrList& record : records) {
      std::string selector, target, mode;
      absl::Status status = GetField(record, contract::kImplModeSelector, &selector);
      if (status.ok()) status = GetField(record, contract::kImplModeTarget, &target);
      if (status.ok()) status = GetField(record, contract::kImplModeMode, &mode);
      if (!status.ok()) return status;
      if (selector != "type" && selector != "name") {
        return absl::InvalidArgumentError("npu_bridge: an implementation mode's selector is '" + selector +
                                          "'; the selectors are type and name");
      }
      modes_[selector + ":" + target] = mode;
    }
    return absl::OkStatus();
  }

  // Node name wins over op type, which wins over the mode for every op; "" when nothing applies.
  std::string For(const std::string& op_type, const std::string& node_name) const {
    for (const std::string& key : {"name:" + node_name, "type:" + op_type, std::string("type:*")}) {
      auto it = modes_.find(key);
      if (it != modes_.end()) return it->second;
    }
    return "";
  }

 private:
  std::unordered_map<std::string, std::string> modes_;
};

std::string StringAttr(const NodeDef& node, const std::string& attr) {
  auto it = node.attr().find(attr);
  return it == node.attr().end() ? "" : it->second.s();
}

class ImplModePass : public RewritePass {
 public:
  std::string name() const override { return "impl_mode"; }

  bool Enabled(const PassPlan& plan, const tensorflow::grappler::GrapplerItem&) const override {
    return !plan.Get(contract::kPrecisionImplModes).empty();
  }

  absl::Status Run(const PassPlan& plan, const tensorflow::grappler::GrapplerItem&, tensorflow::GraphDef* graph,
                   bool* changed) override {
    ImplModes modes;
    absl::Status status = modes.Build(plan.Get(contract::kPrecisionImplModes));
    if (!status.ok()) return status;
    GraphEditor editor(graph);
    for (const std::string& name : editor.original_nodes()) {
      NodeDef* node = editor.Find(name);
      if (node->op() == "Rsqrt" && StringAttr(*node, contract::kImplOpAttr.name) == "LayerNorm") {
        if (modes.For("LayerNorm", StringAttr(*node, contract::kImplNameAttr.name)) != kHighPerformance) continue;
        RsqrtThroughExpLog(&editor, node);
        *changed = true;
      } else if (node->op() == "SoftmaxCrossEntropyWithLogits" && TypeAttr(*node, "T") == tensorflow::DT_HALF) {
        if (modes.For(node->op(), node->name()) != kHighPerformance) continue;
        CrossEntropyWithoutMax(&editor, node);
        *changed = true;
      }
    }
    return absl::OkStatus();
  }

 private:
  template <typename T>
  static std::string AddScalar(GraphEditor* editor, const std::string& name, DataType dtype, T value,
                               const std::string& device) {
    NodeDef* node = editor->AddNode(name, "Const", device);
    tensorflow::Tensor tensor(dtype, tensorflow::TensorShape({}));
    if (dtype == tensorflow::DT_HALF) {
      tensor.scalar<Eigen::half>()() = static_cast<Eigen::half>(static_cast<float>(value));
    } else if (dtype == tensorflow::DT_FLOAT) {
      tensor.scalar<float>()() = static_cast<float>(value);
    } else if (dtype == tensorflow::DT_DOUBLE) {
      tensor.scalar<double>()() = static_cast<double>(value);
    } else {
      tensor.scalar<int32_t>()() = static_cast<int32_t>(value);
    }
    (*node->mutable_attr())["dtype"].set_type(dtype);
    tensor.AsProtoTensorContent((*node->mutable_attr())["value"].mutable_tensor());
    return name;
  }

  static std::string AddOp(GraphEditor* editor, const std::string& name, const std::string& op,
                           const std::vector<std::string>& inputs, DataType dtype, const std::string& device) {
    NodeDef* node = editor->AddNode(name, op, device);
    for (const std::string& input : inputs) editor->AddInput(node, input);
    (*node->mutable_attr())["T"].set_type(dtype);
    return name;
  }

  // rsqrt(v) -> exp(-0.5 * log(v)); the node keeps its name, so its consumers are unchanged.
  static void RsqrtThroughExpLog(GraphEditor* editor, NodeDef* node) {
    const DataType dtype = TypeAttr(*node, "T");
    const std::string prefix = node->name() + "/npu_impl_";
    const std::string log = AddOp(editor, prefix + "log", "Log", {node->input(0)}, dtype, node->device());
    const std::string half = AddScalar(editor, prefix + "minus_half", dtype, -0.5, node->device());
    const std::string scaled = AddOp(editor, prefix + "scaled_log", "Mul", {log, half}, dtype, node->device());
    node->set_op("Exp");
    editor->Rewire(node, 0, scaled);
  }

  // loss = sum(labels * (log(sum(exp(x))) - x)), backprop = exp(x) / sum(exp(x)) - labels, without the
  // max subtraction; the node becomes an IdentityN of the two results, so its consumers are unchanged.
  static void CrossEntropyWithoutMax(GraphEditor* editor, NodeDef* node) {
    const DataType dtype = TypeAttr(*node, "T");
    const std::string& device = node->device();
    const std::string prefix = node->name() + "/npu_impl_";
    const std::string features = node->input(0);
    const std::string labels = node->input(1);
    const std::string axis = AddScalar(editor, prefix + "axis", tensorflow::DT_INT32, -1, device);
    const std::string exp = AddOp(editor, prefix + "exp", "Exp", {features}, dtype, device);
    const std::string sum = AddOp(editor, prefix + "sum_exp", "Sum", {exp, axis}, dtype, device);
    (*editor->Find(sum)->mutable_attr())["Tidx"].set_type(tensorflow::DT_INT32);
    (*editor->Find(sum)->mutable_attr())["keep_dims"].set_b(true);
    const std::string softmax = AddOp(editor, prefix + "softmax", "RealDiv", {exp, sum}, dtype, device);
    const std::string backprop = AddOp(editor, prefix + "backprop", "Sub", {softmax, labels}, dtype, device);
    const std::string log_sum = AddOp(editor, prefix + "log_sum_exp", "Log", {sum}, dtype, device);
    const std::string neg_log_p = AddOp(editor, prefix + "neg_log_softmax", "Sub", {log_sum, features}, dtype, device);
    const std::string weighted = AddOp(editor, prefix + "weighted", "Mul", {labels, neg_log_p}, dtype, device);
    const std::string loss = AddOp(editor, prefix + "loss", "Sum", {weighted, axis}, dtype, device);
    (*editor->Find(loss)->mutable_attr())["Tidx"].set_type(tensorflow::DT_INT32);
    (*editor->Find(loss)->mutable_attr())["keep_dims"].set_b(false);

    node->set_op("IdentityN");
    node->mutable_attr()->clear();
    auto* types = (*node->mutable_attr())["T"].mutable_list();
    types->add_type(dtype);
    types->add_type(dtype);
    editor->Rewire(node, 0, loss);
    editor->Rewire(node, 1, backprop);
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(190, ImplModePass);

}  // namespace npu_bridge
