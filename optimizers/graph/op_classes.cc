#include "optimizers/graph/op_classes.h"

#include <set>

#include "ops/runtime/c_api.h"
#include "ops/runtime/json_text.h"
#include "ops/runtime/no_throw.h"

namespace npu_bridge {
namespace {

const std::set<std::string>& InstrumentationOps() {
  static const auto* ops = new std::set<std::string>{"NpuOverflowCheck",    "NpuDump",         "NpuExceptionCapture",
                                                     "NpuExceptionRelease", "NpuSaturateFp16", "NpuIterationsLoopGuard",
                                                     "NpuLoopIteration"};
  return *ops;
}

}  // namespace

bool MovesValues(const std::string& op) {
  static const auto* ops = new std::set<std::string>{"Const",
                                                     "Placeholder",
                                                     "PlaceholderWithDefault",
                                                     "VariableV2",
                                                     "VarHandleOp",
                                                     "ReadVariableOp",
                                                     "Identity",
                                                     "IdentityN",
                                                     "Snapshot",
                                                     "StopGradient",
                                                     "PreventGradient",
                                                     "Enter",
                                                     "RefEnter",
                                                     "Exit",
                                                     "RefExit",
                                                     "Switch",
                                                     "RefSwitch",
                                                     "Merge",
                                                     "RefMerge",
                                                     "NextIteration",
                                                     "RefNextIteration",
                                                     "_Recv",
                                                     "_Send",
                                                     "_HostRecv",
                                                     "_HostSend",
                                                     "_Arg",
                                                     "_Retval",
                                                     "IteratorGetNext",
                                                     "NoOp",
                                                     "Bitcast",
                                                     "Shape",
                                                     "ShapeN",
                                                     "Size",
                                                     "Rank"};
  return ops->count(op) > 0;
}

bool PreservesValues(const std::string& op) {
  static const auto* ops = new std::set<std::string>{"Reshape",
                                                     "Squeeze",
                                                     "ExpandDims",
                                                     "Transpose",
                                                     "ConjugateTranspose",
                                                     "ConcatV2",
                                                     "Concat",
                                                     "Pack",
                                                     "Unpack",
                                                     "Split",
                                                     "SplitV",
                                                     "Slice",
                                                     "StridedSlice",
                                                     "Gather",
                                                     "GatherV2",
                                                     "GatherNd",
                                                     "Tile",
                                                     "BroadcastTo",
                                                     "Pad",
                                                     "PadV2",
                                                     "MirrorPad",
                                                     "Reverse",
                                                     "ReverseV2",
                                                     "Roll",
                                                     "DepthToSpace",
                                                     "SpaceToDepth",
                                                     "BatchToSpaceND",
                                                     "SpaceToBatchND",
                                                     "MaxPool",
                                                     "MaxPoolV2",
                                                     "MaxPool3D",
                                                     "Max",
                                                     "Min",
                                                     "Maximum",
                                                     "Minimum",
                                                     "Relu",
                                                     "Relu6",
                                                     "Neg",
                                                     "Abs",
                                                     "Sign",
                                                     "Floor",
                                                     "Ceil",
                                                     "Rint",
                                                     "Round",
                                                     "Select",
                                                     "SelectV2",
                                                     "ClipByValue",
                                                     "ZerosLike",
                                                     "EnsureShape",
                                                     "CheckNumerics",
                                                     "ResizeNearestNeighbor",
                                                     "TensorScatterUpdate",
                                                     "MatrixDiag",
                                                     "MatrixDiagPart",
                                                     "Diag",
                                                     "DiagPart",
                                                     "OneHot"};
  return ops->count(op) > 0;
}

bool IsInstrumentationOp(const std::string& op) { return InstrumentationOps().count(op) > 0; }

bool IsStructuralOp(const std::string& op) {
  static const auto* ops = new std::set<std::string>{"If",
                                                     "StatelessIf",
                                                     "While",
                                                     "StatelessWhile",
                                                     "Case",
                                                     "StatelessCase",
                                                     "PartitionedCall",
                                                     "StatefulPartitionedCall",
                                                     "SymbolicGradient",
                                                     "RemoteCall",
                                                     "NoOp",
                                                     "ControlTrigger",
                                                     "LoopCond"};
  return ops->count(op) > 0;
}

bool ComputesFromInputs(const tensorflow::NodeDef& node) {
  return node.input_size() > 0 && !MovesValues(node.op()) && !IsInstrumentationOp(node.op());
}

bool IsComputingNode(const tensorflow::NodeDef& node, const tensorflow::DataTypeVector& input_types) {
  if (!ComputesFromInputs(node) || node.op() == "Cast" || node.op() == kRoundOp) return false;
  for (tensorflow::DataType type : input_types) {
    if (type == tensorflow::DT_RESOURCE || tensorflow::IsRefType(type)) return false;
  }
  return true;
}

const std::map<std::string, std::string>& ArtifactTypeNames() {
  static const auto* names = new std::map<std::string, std::string>{{kRoundOp, "Cast"}};
  return *names;
}

bool IsLowPrecision(tensorflow::DataType dtype) {
  return dtype == tensorflow::DT_HALF || dtype == tensorflow::DT_BFLOAT16;
}

}  // namespace npu_bridge

// {"instrumentation": [op types], "artifact_types": {op type: shown as}}: lets Python tools (the profiler) tell
// instrumentation from the script's ops and name op types as the other artifacts do.
extern "C" size_t npu_bridge_op_classes_json(char* buf, size_t len) {
  return npu_bridge::NoThrowValue<size_t>(0, [&]() -> size_t {
    std::string json = "{\"instrumentation\":[";
    bool first = true;
    for (const std::string& op : npu_bridge::InstrumentationOps()) {
      json += (first ? "" : ",") + npu_bridge::JsonQuote(op);
      first = false;
    }
    json += "],\"artifact_types\":{";
    first = true;
    for (const auto& [op, shown_as] : npu_bridge::ArtifactTypeNames()) {
      json += (first ? "" : ",") + npu_bridge::JsonQuote(op) + ":" + npu_bridge::JsonQuote(shown_as);
      first = false;
    }
    return npu_bridge::CopyToBuffer(json + "}}", buf, len);
  });
}
