// The session's pass plan as the passes read it: typed access to the NpuOptimizer parameter_map through the keys of
// the pass contract (pass_contract.h) only. The Python session bridge has validated, normalized and structured every
// value and FromConfig has checked that each "_npu_" key holds its kind, so the getters only read; a key's default (for
// an absent key) comes from the contract.
#ifndef NPU_BRIDGE_OPTIMIZERS_PASS_PLAN_H_
#define NPU_BRIDGE_OPTIMIZERS_PASS_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "optimizers/pass_contract.h"
#include "tensorflow/core/framework/attr_value.pb.h"
#include "tensorflow/core/framework/types.pb.h"
#include "tensorflow/core/protobuf/rewriter_config.pb.h"

namespace npu_bridge {

class PassPlan {
 public:
  PassPlan() = default;

  // Reads `config`; an "_npu_" key that is not a contract key, or holds another kind, is an
  // InvalidArgument error naming the key.
  static absl::Status FromConfig(const tensorflow::RewriterConfig_CustomGraphOptimizer& config, PassPlan* plan);

  bool Get(contract::BoolKey key) const;
  int64_t Get(contract::IntKey key) const;
  std::string Get(contract::StringKey key) const;
  std::vector<int64_t> Get(contract::IntListKey key) const;
  std::vector<std::string> Get(contract::StringListKey key) const;
  std::vector<tensorflow::NameAttrList> Get(contract::RecordListKey key) const;

  // True when the session bridge validated this plan (it always does for bridged sessions).
  bool validated() const { return Get(contract::kValidated); }
  std::vector<std::string> Keys() const;

 private:
  const tensorflow::AttrValue* Find(const char* key) const;
  google::protobuf::Map<std::string, tensorflow::AttrValue> params_;
};

// Reads one field of a record (an element of a list.func key); a missing field or one of another kind is an
// InvalidArgument error naming the key and the field.
absl::Status GetField(const tensorflow::NameAttrList& record, contract::RecordField field, std::string* value);
absl::Status GetField(const tensorflow::NameAttrList& record, contract::RecordField field, std::vector<int64_t>* value);
absl::Status GetField(const tensorflow::NameAttrList& record, contract::RecordField field,
                      std::vector<tensorflow::DataType>* value);

// True when `value` holds `kind`; a list holds only elements of its kind (an empty list is every list kind).
bool HoldsKind(const tensorflow::AttrValue& value, contract::Kind kind);
// The kind's name as the contract spells it ("b", "list.i", ...).
const char* KindName(contract::Kind kind);
// What `value` holds, in the same spelling ("list.s", "empty list", "nothing", ...), for error messages.
std::string DescribeKind(const tensorflow::AttrValue& value);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_PASS_PLAN_H_
