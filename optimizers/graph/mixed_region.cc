#include "optimizers/graph/mixed_region.h"

#include <algorithm>
#include <vector>

#include "optimizers/graph/graph_util.h"
#include "optimizers/graph/op_classes.h"

namespace npu_bridge {
namespace {

using tensorflow::DataType;
using tensorflow::NodeDef;

bool HasFloat(const tensorflow::DataTypeVector& types) {
  for (DataType type : types) {
    if (type == tensorflow::DT_FLOAT) return true;
  }
  return false;
}

// Ops the region passes through without computing: they forward float32 values (or round them).
bool Forwards(const NodeDef& node) {
  if (node.op() == "Cast") {
    const DataType from = TypeAttr(node, "SrcT"), to = TypeAttr(node, "DstT");
    return (from == tensorflow::DT_FLOAT && IsLowPrecision(to)) || (IsLowPrecision(from) && to == tensorflow::DT_FLOAT);
  }
  return node.op() == kRoundOp || node.op() == "NpuSaturateFp16" ||
         (MovesValues(node.op()) && !IsStructuralOp(node.op()));
}

// True when `input` holds a constant or a variable's value: its producer, seen through ops that only move values,
// is a Const or a variable (or a variable read). Ascend's fusion engine matches such inputs of a gray op last.
bool FromConstantOrVariable(const GraphEditor& editor, std::string input) {
  static const std::set<std::string> kSources = {"Const",    "HostConst",   "VariableV2",
                                                 "Variable", "VarHandleOp", "ReadVariableOp"};
  for (int hops = 0; hops < 64; ++hops) {
    const NodeDef* producer = editor.Find(ParseInput(input).first);
    if (producer == nullptr) return false;
    if (kSources.count(producer->op())) return true;
    const std::vector<std::string> inputs = DataInputs(*producer);
    if (!MovesValues(producer->op()) || IsStructuralOp(producer->op()) || inputs.empty()) return false;
    input = inputs[0];
  }
  return false;
}

// The input that decides a gray node's dtype, as Ascend's fusion engine picks it: the first float32 input, those
// holding a constant or a variable's value counted after the others; -1 when there is no float32 input.
int DecidingInput(const GraphEditor& editor, const NodeDef& node, const tensorflow::DataTypeVector& in) {
  const std::vector<std::string> inputs = DataInputs(node);
  int first_state = -1;
  for (int i = 0; i < static_cast<int>(std::min(inputs.size(), in.size())); ++i) {
    if (in[i] != tensorflow::DT_FLOAT) continue;
    if (!FromConstantOrVariable(editor, inputs[i])) return i;
    if (first_state < 0) first_state = i;
  }
  return first_state;
}

}  // namespace

std::set<std::string> MixedRegion(const GraphEditor& editor, const MixedLists& lists,
                                  const std::function<bool(const NodeDef&)>& excluded) {
  std::set<std::string> region, forwarding;
  std::vector<const NodeDef*> pending;
  auto candidate = [&](const NodeDef& node, tensorflow::DataTypeVector* in, tensorflow::DataTypeVector* out) {
    return NodeTypes(node, in, out) && IsComputingNode(node, *in) && (HasFloat(*in) || HasFloat(*out)) &&
           lists.black.count(node.op()) == 0 && !excluded(node);
  };
  for (const std::string& name : editor.original_nodes()) {
    const NodeDef* node = editor.Find(name);
    tensorflow::DataTypeVector in, out;
    if (lists.white.count(node->op()) && candidate(*node, &in, &out)) {
      region.insert(name);
      pending.push_back(node);
    }
  }
  while (!pending.empty()) {
    const NodeDef* node = pending.back();
    pending.pop_back();
    tensorflow::DataTypeVector in, out;
    if (!NodeTypes(*node, &in, &out)) continue;
    for (int o = 0; o < static_cast<int>(out.size()); ++o) {
      if (out[o] != tensorflow::DT_FLOAT && !(Forwards(*node) && IsLowPrecision(out[o]))) continue;
      for (auto& [consumer, position] : editor.Consumers(TensorName(node->name(), o))) {
        if (region.count(consumer->name()) || forwarding.count(consumer->name())) continue;
        tensorflow::DataTypeVector c_in, c_out;
        if (Forwards(*consumer)) {
          forwarding.insert(consumer->name());
          pending.push_back(consumer);
        } else if (candidate(*consumer, &c_in, &c_out) && position < static_cast<int>(c_in.size()) &&
                   c_in[position] == tensorflow::DT_FLOAT && position == DecidingInput(editor, *consumer, c_in)) {
          region.insert(consumer->name());
          pending.push_back(consumer);
        }
      }
    }
  }
  return region;
}

}  // namespace npu_bridge
