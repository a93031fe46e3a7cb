#include "optimizers/graph/mixed_convert.h"

#include <map>
#include <utility>
#include <vector>

#include "optimizers/graph/graph_util.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/util/device_name_utils.h"

namespace npu_bridge {
namespace {

using tensorflow::DataType;
using tensorflow::NodeDef;

// Sets the float32 type attributes of `node`'s arguments to `lowp`; false when it cannot (or has nothing to).
bool Retype(NodeDef* node, DataType lowp) {
  const tensorflow::OpDef* op_def = nullptr;
  if (!tensorflow::OpRegistry::Global()->LookUpOpDef(node->op(), &op_def).ok()) return false;
  std::set<std::string> attrs;
  for (const auto* args : {&op_def->input_arg(), &op_def->output_arg()}) {
    for (const tensorflow::OpDef::ArgDef& arg : *args) {
      if (!arg.type_list_attr().empty() || arg.type() == tensorflow::DT_FLOAT) return false;
      if (!arg.type_attr().empty() && TypeAttr(*node, arg.type_attr()) == tensorflow::DT_FLOAT) {
        attrs.insert(arg.type_attr());
      }
    }
  }
  for (const std::string& attr : attrs) (*node->mutable_attr())[attr].set_type(lowp);
  return !attrs.empty();
}

bool HasKernel(const NodeDef& node) {
  tensorflow::DeviceNameUtils::ParsedName parsed;
  const bool placed = tensorflow::DeviceNameUtils::ParseFullName(node.device(), &parsed) && parsed.has_type;
  const tensorflow::DeviceType type(placed ? parsed.type : tensorflow::DEVICE_GPU);
  return tensorflow::FindKernelDef(type, node, nullptr, nullptr).ok();
}

}  // namespace

bool ConvertRegion(GraphEditor* editor, const std::set<std::string>& region, const std::set<std::string>& fetched,
                   DataType lowp) {
  struct Types {
    tensorflow::DataTypeVector in, out;
  };
  std::map<std::string, Types> before;
  for (const std::string& name : editor->original_nodes()) {
    NodeDef* node = editor->Find(name);
    if (!region.count(name) || fetched.count(name)) continue;
    Types types;
    NodeDef retyped = *node;
    if (!NodeTypes(*node, &types.in, &types.out) || !Retype(&retyped, lowp) || !HasKernel(retyped)) continue;
    node->mutable_attr()->swap(*retyped.mutable_attr());
    before[name] = std::move(types);
  }
  auto float_slot_of_converted = [&](const std::string& node, int slot, bool input) {
    auto it = before.find(node);
    if (it == before.end()) return false;
    const tensorflow::DataTypeVector& types = input ? it->second.in : it->second.out;
    return slot >= 0 && slot < static_cast<int>(types.size()) && types[slot] == tensorflow::DT_FLOAT;
  };
  std::map<std::string, std::string> casts;  // tensor -> its cast across the border
  auto cast_of = [&](const std::string& tensor, DataType from, DataType to, const std::string& device) {
    auto it = casts.find(tensor);
    if (it != casts.end()) return it->second;
    const auto parsed = ParseInput(tensor);
    const std::string name =
        editor->UniqueName(parsed.first + (to == tensorflow::DT_FLOAT ? "/npu_to_fp32_" : "/npu_to_lowp_") +
                           std::to_string(parsed.second));
    return casts[tensor] = editor->AddCast(name, tensor, from, to, device);
  };
  for (auto& [name, types] : before) {
    NodeDef* node = editor->Find(name);
    for (int i = 0; i < static_cast<int>(types.in.size()); ++i) {
      if (types.in[i] != tensorflow::DT_FLOAT) continue;
      const auto producer = ParseInput(node->input(i));
      if (float_slot_of_converted(producer.first, producer.second, /*input=*/false)) continue;
      editor->Rewire(node, i,
                     cast_of(TensorName(producer.first, producer.second), tensorflow::DT_FLOAT, lowp, node->device()));
    }
  }
  for (auto& [name, types] : before) {
    NodeDef* node = editor->Find(name);
    for (int o = 0; o < static_cast<int>(types.out.size()); ++o) {
      if (types.out[o] != tensorflow::DT_FLOAT) continue;
      const std::string tensor = TensorName(name, o);
      for (auto& [consumer, position] : editor->Consumers(tensor)) {
        if (float_slot_of_converted(consumer->name(), position, /*input=*/true)) continue;
        editor->Rewire(consumer, position, cast_of(tensor, lowp, tensorflow::DT_FLOAT, node->device()));
      }
    }
  }
  return !before.empty();
}

}  // namespace npu_bridge
