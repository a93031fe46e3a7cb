// The pass-parameter contract between Python and the NpuOptimizer passes: every parameter_map key the passes
// read and every node attribute Python stamps on the user's ops for them. Python writes the keys in exactly
// one place (npu_bridge/core/session/pass_contract.py, from one plan per session), with values already
// validated, normalized and structured; the passes read them only through PassOptions (pass_options.h), which
// takes these key objects, so a raw option name cannot be read and every default lives here.
// tests/test_pass_contract.py parses this file and compares it with the Python table: keep one declaration
// per line, in the forms below.
//
// Kinds, named after the AttrValue field that holds the value: b, i, s, list.i, list.s, list.func (a list of
// NameAttrList records with the fields declared below), func (one NameAttrList). A default applies only when
// a key is absent (bridged sessions write every key); list and record keys default to empty.
#ifndef NPU_BRIDGE_OPTIMIZERS_PASS_CONTRACT_H_
#define NPU_BRIDGE_OPTIMIZERS_PASS_CONTRACT_H_

#include <cstdint>

namespace npu_bridge {
namespace contract {

enum class Kind { kBool, kInt, kString, kIntList, kStringList, kTypeList, kRecordList, kRecord };

struct BoolKey {
  const char* name;
  bool default_value;
};
struct IntKey {
  const char* name;
  int64_t default_value;
};
struct StringKey {
  const char* name;
  const char* default_value;
};
struct IntListKey {
  const char* name;
};
struct StringListKey {
  const char* name;
};
struct RecordListKey {
  const char* name;
};
struct RecordKey {
  const char* name;
};
// A field of the records of a list.func key (b, i, s, list.i or list.type; always present).
struct RecordField {
  const char* key;
  const char* name;
  Kind kind;
};
// A node attribute Python stamps on ops of the user's graph.
struct NodeAttr {
  const char* name;
};

// The session bridge validated and normalized the parameter_map (true in every bridged session).
constexpr BoolKey kValidated{"_npu_bridge_validated", false};
// The session's init-stage options, one attr per option (b, i or s); NPUInit makes them process-wide.
constexpr RecordKey kInitOptions{"_npu_bridge_init_options"};

// Data dump (dump pass). The root {dump_path}/{time}/{device id} also holds the overflow records.
constexpr BoolKey kDumpEnabled{"_npu_dump_enabled", false};
constexpr StringKey kDumpRoot{"_npu_dump_root", ""};
// dump_path as the user gave it: the dump writer creates the directories below it, or refuses other users'.
constexpr StringKey kDumpBase{"_npu_dump_base", ""};
constexpr BoolKey kDumpInputs{"_npu_dump_inputs", false};
constexpr BoolKey kDumpOutputs{"_npu_dump_outputs", true};
constexpr BoolKey kDumpStats{"_npu_dump_stats", false};    // statistic.csv instead of tensors
constexpr BoolKey kDumpGolden{"_npu_dump_golden", false};  // golden .npy files next to dumped outputs
constexpr IntListKey kDumpSteps{"_npu_dump_steps"};        // first, last, first, last, ...; empty: every step
constexpr StringListKey kDumpLayers{"_npu_dump_layers"};   // op names; empty: every op

// Overflow detection (overflow check pass): check and report every floating-point output.
constexpr BoolKey kOverflowCheck{"_npu_overflow_check", false};
constexpr BoolKey kOverflowFp16Saturation{"_npu_overflow_fp16_saturation", false};  // fp16 saturation counts

// Exception dump (exception capture pass).
constexpr BoolKey kExceptionDump{"_npu_exception_dump", false};
constexpr StringKey kExceptionDir{"_npu_exception_dir", ""};
// The base the exception directory is {base}/extra-info/data-dump/{device id} of, as kDumpBase.
constexpr StringKey kExceptionBase{"_npu_exception_base", ""};
constexpr IntKey kSessionId{"_npu_session_id", 0};  // names the capture slots of the session

// Precision (impl_mode, precision and fp16_saturation passes).
constexpr BoolKey kPrecisionRewrite{"_npu_precision_rewrite", false};  // run the precision pass (rules may be empty)
constexpr RecordListKey kPrecisionRules{"_npu_precision_rules"};
// Mixed modes: the reduced precision ("float16" / "bfloat16"; "" outside mixed modes), whether the region
// really computes in it (GPU) or is emulated by rounding, and the white / black op type lists.
constexpr StringKey kPrecisionMixedDtype{"_npu_precision_mixed_dtype", ""};
constexpr BoolKey kPrecisionMixedConvert{"_npu_precision_mixed_convert", false};
constexpr StringListKey kPrecisionMixedWhite{"_npu_precision_mixed_white"};
constexpr StringListKey kPrecisionMixedBlack{"_npu_precision_mixed_black"};
constexpr BoolKey kPrecisionAscendFp16{"_npu_precision_ascend_fp16", false};  // simulated Ascend fp16 saturation
constexpr RecordListKey kPrecisionImplModes{"_npu_precision_impl_modes"};

constexpr IntKey kIterationsPerLoop{"_npu_iterations_per_loop", 1};
constexpr IntKey kCollectiveTimeout{"_npu_collective_timeout", 0};  // seconds; 0 leaves the ops' own timeout
// The session bounds each run with collectives by the timeout (its run hook): collectives outside loops drop
// their own timeout.
constexpr BoolKey kCollectiveRunBound{"_npu_collective_run_bound", false};

// One precision rule: the ops it selects (selector "type" with an op type or "*" for every computing op, or
// "name" with a node name; name wins over type, type over "*") and the float32 slots it rounds through float16
// or bfloat16 or keeps in float32 (slot -1: every float32 slot; dtypes pair up with slots).
constexpr RecordField kRuleSelector{"_npu_precision_rules", "selector", Kind::kString};
constexpr RecordField kRuleTarget{"_npu_precision_rules", "target", Kind::kString};
constexpr RecordField kRuleInputSlots{"_npu_precision_rules", "input_slots", Kind::kIntList};
constexpr RecordField kRuleInputDtypes{"_npu_precision_rules", "input_dtypes", Kind::kTypeList};
constexpr RecordField kRuleOutputSlots{"_npu_precision_rules", "output_slots", Kind::kIntList};
constexpr RecordField kRuleOutputDtypes{"_npu_precision_rules", "output_dtypes", Kind::kTypeList};
// One implementation mode: selected like a rule; mode "high_precision" or "high_performance".
constexpr RecordField kImplModeSelector{"_npu_precision_impl_modes", "selector", Kind::kString};
constexpr RecordField kImplModeTarget{"_npu_precision_impl_modes", "target", Kind::kString};
constexpr RecordField kImplModeMode{"_npu_precision_impl_modes", "mode", Kind::kString};

// i or b != 0: the precision passes leave the op's dtypes (keep_dtype_scope, keep_tensors_dtypes).
constexpr NodeAttr kKeepDtypeAttr{"_keep_dtype"};
// b: the IterationOp; a run fetching it performs iterations_per_loop steps.
constexpr NodeAttr kIterationOpAttr{"_npu_iteration_op"};
// s (the group name): a collective npu_bridge built; the collective timeout pass stamps its timeout.
constexpr NodeAttr kCollectiveGroupAttr{"_npu_hccl_group"};
// s: the Ascend op a composed op implements (a LayerNorm's Rsqrt), and the name the user gave that op.
constexpr NodeAttr kImplOpAttr{"_npu_impl_op"};
constexpr NodeAttr kImplNameAttr{"_npu_impl_name"};
// s: a function call that computes one Ascend op (npu_bridge/core/compute/composite.py), its op type; i: how
// many of the call's outputs are the op's (TensorFlow's gradient appends intermediates after them).
constexpr NodeAttr kComposedOpAttr{"_npu_op_type"};
constexpr NodeAttr kComposedOutputsAttr{"_npu_op_outputs"};

// Every key with its kind, for NpuOptimizer::Init to check the parameter_map.
struct KeySpec {
  const char* name;
  Kind kind;
};
constexpr KeySpec Spec(BoolKey key) { return {key.name, Kind::kBool}; }
constexpr KeySpec Spec(IntKey key) { return {key.name, Kind::kInt}; }
constexpr KeySpec Spec(StringKey key) { return {key.name, Kind::kString}; }
constexpr KeySpec Spec(IntListKey key) { return {key.name, Kind::kIntList}; }
constexpr KeySpec Spec(StringListKey key) { return {key.name, Kind::kStringList}; }
constexpr KeySpec Spec(RecordListKey key) { return {key.name, Kind::kRecordList}; }
constexpr KeySpec Spec(RecordKey key) { return {key.name, Kind::kRecord}; }
constexpr KeySpec kAllKeys[] = {
    Spec(kValidated),
    Spec(kInitOptions),
    Spec(kDumpEnabled),
    Spec(kDumpRoot),
    Spec(kDumpBase),
    Spec(kDumpInputs),
    Spec(kDumpOutputs),
    Spec(kDumpStats),
    Spec(kDumpGolden),
    Spec(kDumpSteps),
    Spec(kDumpLayers),
    Spec(kOverflowCheck),
    Spec(kOverflowFp16Saturation),
    Spec(kExceptionDump),
    Spec(kExceptionDir),
    Spec(kExceptionBase),
    Spec(kSessionId),
    Spec(kPrecisionRewrite),
    Spec(kPrecisionRules),
    Spec(kPrecisionMixedDtype),
    Spec(kPrecisionMixedConvert),
    Spec(kPrecisionMixedWhite),
    Spec(kPrecisionMixedBlack),
    Spec(kPrecisionAscendFp16),
    Spec(kPrecisionImplModes),
    Spec(kIterationsPerLoop),
    Spec(kCollectiveTimeout),
    Spec(kCollectiveRunBound),
};
// Parameter_map keys with this prefix belong to the contract; any other "_npu_" key is an error.
constexpr char kKeyPrefix[] = "_npu_";

}  // namespace contract
}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_PASS_CONTRACT_H_
