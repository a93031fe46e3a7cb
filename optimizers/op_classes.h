// Which ops compute values (as opposed to moving or holding them), for the precision passes. Precision
// rules and fp16 saturation apply to computing ops only.
#ifndef NPU_BRIDGE_OPTIMIZERS_OP_CLASSES_H_
#define NPU_BRIDGE_OPTIMIZERS_OP_CLASSES_H_

#include "tensorflow/core/framework/node_def.pb.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {

// True for ops that compute floating-point results from their inputs: not sources, variables, identities,
// control flow, send/receive, casts, and not the project's own instrumentation ops. Ops that read or write
// variables through resource or reference inputs (optimizer updates) do not count either: variables keep
// their dtype.
bool IsComputingNode(const tensorflow::NodeDef& node, const tensorflow::DataTypeVector& input_types);

// The low-precision types a precision rule can round to.
bool IsLowPrecision(tensorflow::DataType dtype);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_OP_CLASSES_H_
