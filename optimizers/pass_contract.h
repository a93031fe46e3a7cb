// The pass-parameter contract between Python and the NpuOptimizer passes: every parameter_map key the passes
// read and every node attribute Python stamps on the user's ops for them. Python writes the keys in exactly
// one place (npu_bridge/core/plan/pass_contract.py, from one plan per session), with values already
// validated, normalized and structured; the passes read them only through PassPlan (pass_plan.h), which
// takes these key objects, so a raw option name cannot be read and every default lives here.
// The keys, with their kinds and defaults, are declared in pass_contract_keys.h, which the build generates from
// the Python table (npu_bridge/core/plan/contract_table.py, by contract_header.py); tests/plan/test_pass_contract.py
// fails when the checked-in copy is stale. This file declares the types those declarations use.
//
// Kinds, named after the AttrValue field that holds the value: b, i, s, list.i, list.s, list.func (a list of
// NameAttrList records with the fields declared below). A default applies only when a key is absent (bridged
// sessions write every key); list keys default to empty.
#ifndef NPU_BRIDGE_OPTIMIZERS_PASS_CONTRACT_H_
#define NPU_BRIDGE_OPTIMIZERS_PASS_CONTRACT_H_

#include <cstdint>

namespace npu_bridge {
namespace contract {

enum class Kind { kBool, kInt, kString, kIntList, kStringList, kTypeList, kRecordList };

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

// A key's name and kind (kAllKeys lists every key).
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
}  // namespace contract
}  // namespace npu_bridge

#include "optimizers/pass_contract_keys.h"  // IWYU pragma: export

#endif  // NPU_BRIDGE_OPTIMIZERS_PASS_CONTRACT_H_
