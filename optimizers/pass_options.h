// Typed read access to the NpuOptimizer parameter_map. The Python session bridge has already validated
// and normalized every value (bools in .b, ints in .i, strings in .s), so C++ only reads.
#ifndef NPU_BRIDGE_OPTIMIZERS_PASS_OPTIONS_H_
#define NPU_BRIDGE_OPTIMIZERS_PASS_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tensorflow/core/framework/attr_value.pb.h"
#include "tensorflow/core/protobuf/rewriter_config.pb.h"

namespace npu_bridge {

// Keys the session bridge adds next to the user's options.
constexpr char kValidatedKey[] = "_npu_bridge_validated";        // b: written by the session bridge
constexpr char kInitOptionsKey[] = "_npu_bridge_init_options";   // s: JSON of init-stage options

class PassOptions {
 public:
  PassOptions() = default;
  explicit PassOptions(const tensorflow::RewriterConfig_CustomGraphOptimizer& config);

  bool Has(const std::string& key) const;
  bool GetBool(const std::string& key, bool default_value) const;
  int64_t GetInt(const std::string& key, int64_t default_value) const;
  std::string GetString(const std::string& key, const std::string& default_value) const;

  // True when the session bridge validated these options (it always does for bridged sessions).
  bool validated() const { return GetBool(kValidatedKey, false); }
  std::vector<std::string> Keys() const;

 private:
  const tensorflow::AttrValue* Find(const std::string& key) const;
  google::protobuf::Map<std::string, tensorflow::AttrValue> params_;
};

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_PASS_OPTIONS_H_
