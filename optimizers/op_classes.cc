#include "optimizers/op_classes.h"

#include <set>
#include <string>

#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace {

const std::set<std::string>& NonComputingOps() {
  static const auto* ops = new std::set<std::string>{
      "Const", "Placeholder", "PlaceholderWithDefault", "VariableV2", "VarHandleOp", "ReadVariableOp",
      "Identity", "IdentityN", "Snapshot", "StopGradient", "PreventGradient", "Enter", "RefEnter", "Exit",
      "RefExit", "Switch", "RefSwitch", "Merge", "RefMerge", "NextIteration", "RefNextIteration", "_Recv",
      "_Send", "_HostRecv", "_HostSend", "_Arg", "_Retval", "IteratorGetNext", "NoOp", "Cast", "Bitcast",
      "NpuSaturateFp16", "NpuOverflowCheck", "Shape", "ShapeN", "Size", "Rank"};
  return *ops;
}

}  // namespace

bool IsComputingNode(const tensorflow::NodeDef& node, const tensorflow::DataTypeVector& input_types) {
  if (node.input_size() == 0 || NonComputingOps().count(node.op())) return false;
  for (tensorflow::DataType type : input_types) {
    if (type == tensorflow::DT_RESOURCE || tensorflow::IsRefType(type)) return false;
  }
  return true;
}

bool IsLowPrecision(tensorflow::DataType dtype) {
  return dtype == tensorflow::DT_HALF || dtype == tensorflow::DT_BFLOAT16;
}

}  // namespace npu_bridge
