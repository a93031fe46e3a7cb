// The session's init-stage options (contract::kInitOptions, one attr per option) as the JSON object the
// process-wide system state keeps and hands back to Python (ops/runtime/system_state.h).
#ifndef NPU_BRIDGE_OPTIMIZERS_INIT_OPTIONS_H_
#define NPU_BRIDGE_OPTIMIZERS_INIT_OPTIONS_H_

#include <string>

#include "absl/status/status.h"
#include "tensorflow/core/framework/attr_value.pb.h"

namespace npu_bridge {

// Writes {"option": value, ...} with the options sorted by name: b as true / false, i as a number, s as a
// string. Any other kind is an InvalidArgument error naming the option.
absl::Status InitOptionsJson(const tensorflow::NameAttrList& options, std::string* json);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_INIT_OPTIONS_H_
