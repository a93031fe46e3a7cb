#include "optimizers/graph/mixed_region.h"

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
                   c_in[position] == tensorflow::DT_FLOAT) {
          region.insert(consumer->name());
          pending.push_back(consumer);
        }
      }
    }
  }
  return region;
}

}  // namespace npu_bridge
