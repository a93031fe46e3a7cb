#include "optimizers/pass_options.h"

#include <algorithm>

namespace npu_bridge {

PassOptions::PassOptions(const tensorflow::RewriterConfig_CustomGraphOptimizer& config)
    : params_(config.parameter_map()) {}

const tensorflow::AttrValue* PassOptions::Find(const std::string& key) const {
  auto it = params_.find(key);
  return it == params_.end() ? nullptr : &it->second;
}

bool PassOptions::Has(const std::string& key) const { return Find(key) != nullptr; }

bool PassOptions::GetBool(const std::string& key, bool default_value) const {
  const tensorflow::AttrValue* v = Find(key);
  return v == nullptr ? default_value : v->b();
}

int64_t PassOptions::GetInt(const std::string& key, int64_t default_value) const {
  const tensorflow::AttrValue* v = Find(key);
  return v == nullptr ? default_value : v->i();
}

std::string PassOptions::GetString(const std::string& key, const std::string& default_value) const {
  const tensorflow::AttrValue* v = Find(key);
  return v == nullptr ? default_value : v->s();
}

std::vector<std::string> PassOptions::Keys() const {
  std::vector<std::string> keys;
  keys.reserve(params_.size());
  for (const auto& kv : params_) keys.push_back(kv.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace npu_bridge
