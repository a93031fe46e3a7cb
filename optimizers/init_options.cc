#include "optimizers/init_options.h"

#include <map>

#include "ops/runtime/json_text.h"
#include "optimizers/pass_contract.h"
#include "optimizers/pass_options.h"

namespace npu_bridge {

absl::Status InitOptionsJson(const tensorflow::NameAttrList& options, std::string* json) {
  std::map<std::string, tensorflow::AttrValue> sorted;
  for (const auto& entry : options.attr()) sorted.emplace(entry.first, entry.second);
  std::string out = "{";
  for (const auto& [name, value] : sorted) {
    std::string text;
    switch (value.value_case()) {
      case tensorflow::AttrValue::kB:
        text = value.b() ? "true" : "false";
        break;
      case tensorflow::AttrValue::kI:
        text = std::to_string(value.i());
        break;
      case tensorflow::AttrValue::kS:
        text = JsonQuote(value.s());
        break;
      default:
        return absl::InvalidArgumentError(std::string("npu_bridge: the init option ") + name +
                                          " in the NpuOptimizer parameter_map key " + contract::kInitOptions.name +
                                          " holds " + DescribeKind(value) + "; init options are b, i or s");
    }
    out += (out.size() > 1 ? "," : "") + JsonQuote(name) + ":" + text;
  }
  *json = out + "}";
  return absl::OkStatus();
}

}  // namespace npu_bridge
