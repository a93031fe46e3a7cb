// Which ops compute values, as opposed to moving, holding or reinterpreting them, shared by every rewrite
// pass: precision rules and fp16 saturation apply to computing ops, overflow checks and dumps watch them
// (Ascend runs no device task for the others, and an inf there was produced -- and caught -- upstream).
#ifndef NPU_BRIDGE_OPTIMIZERS_OP_CLASSES_H_
#define NPU_BRIDGE_OPTIMIZERS_OP_CLASSES_H_

#include <map>
#include <string>

#include "tensorflow/core/framework/node_def.pb.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {

// Sources, variables, identities, dataflow control flow, send/receive, shape queries: ops that move, hold or
// describe values without computing them.
bool MovesValues(const std::string& op);

// Ops of this project's own instrumentation (overflow checks, dumps, exception capture, fp16 saturation, the
// iterations loop guard and iteration marker); npu_bridge_op_classes_json() lists them for Python.
bool IsInstrumentationOp(const std::string& op);

// Function calls and functional control flow (their bodies hold the computing ops), control-only ops, and
// LoopCond, whose output the executor's loop machinery must receive directly.
bool IsStructuralOp(const std::string& op);

// True for ops that compute from inputs: ops with inputs (data or control; an op without any is a source) that
// neither move, hold or describe values (MovesValues) nor belong to this project's instrumentation. The base of
// IsComputingNode (precision) and of Watches (instrumentation.h: which ops overflow checks, dumps and exception
// capture watch).
bool ComputesFromInputs(const tensorflow::NodeDef& node);

// True for ops that compute floating-point results from their inputs, in the precision passes' sense:
// ComputesFromInputs, not casts, and not ops that read or write variables through resource or reference inputs
// (optimizer updates): variables keep their dtype.
bool IsComputingNode(const tensorflow::NodeDef& node, const tensorflow::DataTypeVector& input_types);

// Ops whose float outputs hold only values of their float inputs (reshapes, slices, gathers, concatenation,
// max pooling, Relu, Maximum, ...): given inputs fp16 can represent, so are their outputs.
bool PreservesValues(const std::string& op);

// The precision pass's rounding of float32 values through float16 / bfloat16 (attribute "to"), Ascend's
// precision Cast in one kernel (ops/kernels/round_kernels.cc). Not a computing op; artifacts call it Cast.
constexpr char kRoundOp[] = "NpuRound";
// b, on an NpuRound: it rounds an op's output (the op computes in the reduced type), not an op's input.
constexpr char kRoundsOutputAttr[] = "_npu_rounds_output";

// Op types of this project that artifacts (dumps, overflow records, profiles) show as Ascend's op type: NpuRound
// is a Cast. npu_bridge_op_classes_json() hands the table to Python.
const std::map<std::string, std::string>& ArtifactTypeNames();

// The low-precision types a precision rule can round to.
bool IsLowPrecision(tensorflow::DataType dtype);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_OP_CLASSES_H_
