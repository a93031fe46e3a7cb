#include "optimizers/pass_plan.h"

#include <algorithm>
#include <string>
#include <vector>

namespace npu_bridge {

namespace {

using contract::Kind;

const contract::KeySpec* FindSpec(const std::string& name) {
  for (const contract::KeySpec& spec : contract::kAllKeys) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

bool OnlyList(const tensorflow::AttrValue::ListValue& list, int non_empty_of_kind) {
  const int total = list.s_size() + list.i_size() + list.f_size() + list.b_size() + list.type_size() +
                    list.shape_size() + list.tensor_size() + list.func_size();
  return total == non_empty_of_kind;
}

absl::Status FieldError(contract::RecordField field, const std::string& problem) {
  return absl::InvalidArgumentError(std::string("npu_bridge: a record of the NpuOptimizer parameter_map key ") +
                                    field.key + " " + problem +
                                    "; the pass contract (optimizers/pass_contract.h) "
                                    "gives every record the field '" +
                                    field.name + "' of kind " + KindName(field.kind));
}

absl::Status FindField(const tensorflow::NameAttrList& record, contract::RecordField field,
                       const tensorflow::AttrValue** value) {
  auto it = record.attr().find(field.name);
  if (it == record.attr().end()) return FieldError(field, std::string("has no field '") + field.name + "'");
  if (!HoldsKind(it->second, field.kind)) {
    return FieldError(field, std::string("holds ") + DescribeKind(it->second) + " in its field '" + field.name + "'");
  }
  *value = &it->second;
  return absl::OkStatus();
}

}  // namespace

absl::Status PassPlan::FromConfig(const tensorflow::RewriterConfig_CustomGraphOptimizer& config, PassPlan* plan) {
  const std::string prefix = contract::kKeyPrefix;
  for (const auto& entry : config.parameter_map()) {
    const std::string& key = entry.first;
    const tensorflow::AttrValue& value = entry.second;
    if (key.compare(0, prefix.size(), prefix) != 0) continue;  // the user's own options: never read
    const contract::KeySpec* spec = FindSpec(key);
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          "npu_bridge: NpuOptimizer parameter_map key " + key +
          " is not a key of the pass contract "
          "(optimizers/pass_contract.h); keys starting with " +
          prefix +
          " are written by npu_bridge's session "
          "bridge only, and this library was built with a different contract than the Python package");
    }
    if (!HoldsKind(value, spec->kind)) {
      return absl::InvalidArgumentError(
          "npu_bridge: NpuOptimizer parameter_map key " + key + " holds " + DescribeKind(value) +
          ", but the pass contract (optimizers/pass_contract.h) declares it " + KindName(spec->kind));
    }
  }
  plan->params_ = config.parameter_map();
  return absl::OkStatus();
}

const tensorflow::AttrValue* PassPlan::Find(const char* key) const {
  auto it = params_.find(key);
  return it == params_.end() ? nullptr : &it->second;
}

bool PassPlan::Get(contract::BoolKey key) const {
  const tensorflow::AttrValue* v = Find(key.name);
  return v == nullptr ? key.default_value : v->b();
}

int64_t PassPlan::Get(contract::IntKey key) const {
  const tensorflow::AttrValue* v = Find(key.name);
  return v == nullptr ? key.default_value : v->i();
}

std::string PassPlan::Get(contract::StringKey key) const {
  const tensorflow::AttrValue* v = Find(key.name);
  return v == nullptr ? key.default_value : v->s();
}

std::vector<int64_t> PassPlan::Get(contract::IntListKey key) const {
  const tensorflow::AttrValue* v = Find(key.name);
  if (v == nullptr) return {};
  return std::vector<int64_t>(v->list().i().begin(), v->list().i().end());
}

std::vector<std::string> PassPlan::Get(contract::StringListKey key) const {
  const tensorflow::AttrValue* v = Find(key.name);
  if (v == nullptr) return {};
  return std::vector<std::string>(v->list().s().begin(), v->list().s().end());
}

std::vector<tensorflow::NameAttrList> PassPlan::Get(contract::RecordListKey key) const {
  const tensorflow::AttrValue* v = Find(key.name);
  if (v == nullptr) return {};
  return std::vector<tensorflow::NameAttrList>(v->list().func().begin(), v->list().func().end());
}

std::vector<std::string> PassPlan::Keys() const {
  std::vector<std::string> keys;
  keys.reserve(params_.size());
  for (const auto& kv : params_) keys.push_back(kv.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

absl::Status GetField(const tensorflow::NameAttrList& record, contract::RecordField field, std::string* value) {
  const tensorflow::AttrValue* found = nullptr;
  if (field.kind != Kind::kString) return FieldError(field, "is read as s");
  absl::Status status = FindField(record, field, &found);
  if (status.ok()) *value = found->s();
  return status;
}

absl::Status GetField(const tensorflow::NameAttrList& record, contract::RecordField field,
                      std::vector<int64_t>* value) {
  const tensorflow::AttrValue* found = nullptr;
  if (field.kind != Kind::kIntList) return FieldError(field, "is read as list.i");
  absl::Status status = FindField(record, field, &found);
  if (status.ok()) value->assign(found->list().i().begin(), found->list().i().end());
  return status;
}

absl::Status GetField(const tensorflow::NameAttrList& record, contract::RecordField field,
                      std::vector<tensorflow::DataType>* value) {
  const tensorflow::AttrValue* found = nullptr;
  if (field.kind != Kind::kTypeList) return FieldError(field, "is read as list.type");
  absl::Status status = FindField(record, field, &found);
  if (!status.ok()) return status;
  value->clear();
  for (int type : found->list().type()) value->push_back(static_cast<tensorflow::DataType>(type));
  return absl::OkStatus();
}

bool HoldsKind(const tensorflow::AttrValue& value, contract::Kind kind) {
  const auto& list = value.list();
  switch (kind) {
    case Kind::kBool:
      return value.value_case() == tensorflow::AttrValue::kB;
    case Kind::kInt:
      return value.value_case() == tensorflow::AttrValue::kI;
    case Kind::kString:
      return value.value_case() == tensorflow::AttrValue::kS;
    case Kind::kIntList:
      return value.value_case() == tensorflow::AttrValue::kList && OnlyList(list, list.i_size());
    case Kind::kStringList:
      return value.value_case() == tensorflow::AttrValue::kList && OnlyList(list, list.s_size());
    case Kind::kTypeList:
      return value.value_case() == tensorflow::AttrValue::kList && OnlyList(list, list.type_size());
    case Kind::kRecordList:
      return value.value_case() == tensorflow::AttrValue::kList && OnlyList(list, list.func_size());
  }
  return false;
}

const char* KindName(contract::Kind kind) {
  switch (kind) {
    case Kind::kBool:
      return "b";
    case Kind::kInt:
      return "i";
    case Kind::kString:
      return "s";
    case Kind::kIntList:
      return "list.i";
    case Kind::kStringList:
      return "list.s";
    case Kind::kTypeList:
      return "list.type";
    case Kind::kRecordList:
      return "list.func";
  }
  return "?";
}

std::string DescribeKind(const tensorflow::AttrValue& value) {
  switch (value.value_case()) {
    case tensorflow::AttrValue::kB:
      return "b";
    case tensorflow::AttrValue::kI:
      return "i";
    case tensorflow::AttrValue::kS:
      return "s";
    case tensorflow::AttrValue::kF:
      return "f";
    case tensorflow::AttrValue::kType:
      return "type";
    case tensorflow::AttrValue::kShape:
      return "shape";
    case tensorflow::AttrValue::kTensor:
      return "tensor";
    case tensorflow::AttrValue::kFunc:
      return "func";
    case tensorflow::AttrValue::kPlaceholder:
      return "placeholder";
    case tensorflow::AttrValue::kList:
      break;
    default:
      return "nothing";
  }
  const auto& list = value.list();
  std::string kinds;
  const std::pair<const char*, int> parts[] = {{"list.s", list.s_size()},           {"list.i", list.i_size()},
                                               {"list.f", list.f_size()},           {"list.b", list.b_size()},
                                               {"list.type", list.type_size()},     {"list.shape", list.shape_size()},
                                               {"list.tensor", list.tensor_size()}, {"list.func", list.func_size()}};
  for (const auto& [name, size] : parts) {
    if (size > 0) kinds += (kinds.empty() ? "" : " and ") + std::string(name);
  }
  return kinds.empty() ? "empty list" : kinds;
}

}  // namespace npu_bridge
