// When the emulated float-status register is read: after everything that can set it in the step.
//
// On Ascend a step's tasks run one after another in topological order, so when a step reads the register every op
// placed before the read has set it (or not). TensorFlow runs independent ops in parallel: an op that can set the
// register but that the read does not wait for -- the loss value a step only returns, multiplied by a loss scale
// that saturates it -- may run after the read and after the clear that follows it, and the next step would count
// its overflow. OrderStatusReads makes every read wait for each op of its frame that can set the register and is
// neither already before the read nor after it (an op after it cannot be waited for without a cycle).
#ifndef NPU_BRIDGE_OPTIMIZERS_GRAPH_STATUS_ORDER_H_
#define NPU_BRIDGE_OPTIMIZERS_GRAPH_STATUS_ORDER_H_

#include "tensorflow/core/framework/graph.pb.h"

namespace npu_bridge {

// True for this project's ops that set the register: overflow checks, fp16 saturation and the precision pass's
// saturating roundings.
bool SetsFloatStatus(const tensorflow::NodeDef& node);

// Adds the control inputs described above to every NpuGetFloatStatus / NpuGetFloatStatusV2 of `graph`, for the
// setters that run: in a function body (`function_body`, IsFunctionBody) all of them, in a session's graph those
// something reads or waits for (a session prunes the others, such as the check of an output that is only fetched,
// and a wait would make them run). Setters inside another while-loop frame (TF1 control flow) than the read's are
// left alone: an edge between frames is invalid. Returns true when an input was added.
bool OrderStatusReads(bool function_body, tensorflow::GraphDef* graph);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_GRAPH_STATUS_ORDER_H_
