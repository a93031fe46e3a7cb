#include "optimizers/graph/instrumentation.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "ops/runtime/dump_layout.h"
#include "ops/runtime/dump_node_attrs.h"
#include "optimizers/pass_contract.h"
#include "tensorflow/core/framework/node_def_util.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_def.pb.h"
#include "tensorflow/core/grappler/utils.h"
#include "tensorflow/core/util/device_name_utils.h"

namespace npu_bridge {

bool IsMainGraph(const tensorflow::grappler::GrapplerItem& item, bool function_graphs) {
  return function_graphs || !IsFunctionBody(item, false);
}

bool IsFunctionBody(const tensorflow::grappler::GrapplerItem& item, bool function_graphs) {
  if (function_graphs) return true;
  for (const auto& node : item.graph.node()) {
    if (node.op() == "_Arg" || node.op() == "_Retval") return true;
  }
  return false;
}

int64_t TaskIdOf(tensorflow::NodeDef* node) {
  static std::atomic<int64_t> next_task_id{1};
  auto* attrs = node->mutable_attr();
  auto it = attrs->find(kTaskIdAttr);
  if (it != attrs->end()) return it->second.i();
  const int64_t id = next_task_id++;
  (*attrs)[kTaskIdAttr].set_i(id);
  return id;
}

DumpModel FindOrCreateModel(const tensorflow::GraphDef& graph, const std::string& root) {
  for (const auto& node : graph.node()) {
    if (!IsInstrumentationOp(node.op())) continue;
    auto id = node.attr().find(dump_node::kModelId);  // the same names on every instrumentation op
    auto dir = node.attr().find(dump_node::kDumpDir);
    if (id != node.attr().end() && id->second.i() > 0 && dir != node.attr().end()) {
      return {id->second.i(), dir->second.s()};
    }
  }
  static std::atomic<int64_t> next_model_id{1};
  DumpModel model;
  model.id = next_model_id++;
  if (!root.empty()) model.dir = ModelDumpDir(root, model.id);
  return model;
}

std::string CpuDevice(const std::string& device) {
  tensorflow::DeviceNameUtils::ParsedName parsed;
  if (device.empty() || !tensorflow::DeviceNameUtils::ParseFullName(device, &parsed)) return "";
  parsed.has_type = true;
  parsed.type = "CPU";
  parsed.has_id = true;
  parsed.id = 0;
  return tensorflow::DeviceNameUtils::ParsedNameToString(parsed);
}

bool IsFloatStatusOp(const std::string& op) {
  static const auto* ops = new std::set<std::string>{"NpuAllocFloatStatus", "NpuGetFloatStatus", "NpuClearFloatStatus",
                                                     "NpuGetFloatStatusV2", "NpuClearFloatStatusV2"};
  return ops->count(op) > 0;
}

bool Watches(Watcher watcher, const tensorflow::NodeDef& node, const std::set<std::string>& fed) {
  if (!ComputesFromInputs(node) || fed.count(node.name())) return false;
  tensorflow::DataTypeVector inputs, outputs;
  if (!NodeTypes(node, &inputs, &outputs)) return false;
  switch (watcher) {
    case Watcher::kOverflowCheck:  // structural ops too, not the register's ops (instrumentation.h)
      return !IsFloatStatusOp(node.op());
    case Watcher::kDump:
    case Watcher::kExceptionCapture:
      return !IsStructuralOp(node.op()) || IsComposedOp(node);
  }
  return false;
}

bool ForwardsInput(const std::string& op) {
  static const auto* ops =
      new std::set<std::string>{"Identity",      "IdentityN",        "StopGradient", "PreventGradient", "Reshape",
                                "Squeeze",       "ExpandDims",       "Enter",        "RefEnter",        "Exit",
                                "RefExit",       "Switch",           "RefSwitch",    "Merge",           "RefMerge",
                                "NextIteration", "NpuOverflowCheck", "NpuDump"};
  return ops->count(op) > 0;
}

bool AliasesVariable(const tensorflow::GraphDef& graph, const std::map<std::string, int>& index_of,
                     const std::string& tensor) {
  std::string current = tensor;
  for (int depth = 0; depth < 64; ++depth) {  // forwarding chains are short; the bound guards cycles
    int position = 0;
    auto it = index_of.find(tensorflow::grappler::ParseNodeName(current, &position));
    if (it == index_of.end() || position < 0) return false;
    const tensorflow::NodeDef& producer = graph.node(it->second);
    tensorflow::DataTypeVector inputs, outputs;
    if (!NodeTypes(producer, &inputs, &outputs) || position >= static_cast<int>(outputs.size())) return false;
    if (tensorflow::IsRefType(outputs[position])) return true;
    if (!ForwardsInput(producer.op())) return false;
    const std::vector<std::string> data = DataInputs(producer);
    const int forwarded = producer.op() == "IdentityN" ? position : 0;
    if (forwarded >= static_cast<int>(data.size())) return false;
    current = data[forwarded];
  }
  return false;
}

namespace {

bool IsCall(const std::string& op) { return op == "PartitionedCall" || op == "StatefulPartitionedCall"; }

std::string StringAttr(const tensorflow::NodeDef& node, const char* name) {
  auto it = node.attr().find(name);
  return it == node.attr().end() ? "" : it->second.s();
}

// True when `name` lies in the gradient scope TensorFlow opens for op `forward`: ".../{forward}_grad/...".
bool InGradientScope(const std::string& name, const std::string& forward) {
  const std::string scope = forward + "_grad/";
  for (size_t at = name.find(scope); at != std::string::npos; at = name.find(scope, at + 1)) {
    if (at == 0 || name[at - 1] == '/') return true;
  }
  return false;
}

}  // namespace

void StampComposedGradients(tensorflow::GraphDef* graph) {
  std::vector<std::pair<std::string, std::string>> forward;  // (user's name, type) of stamped calls
  for (const auto& node : graph->node()) {
    const std::string type = StringAttr(node, contract::kComposedOpAttr.name);
    if (IsCall(node.op()) && !type.empty()) forward.emplace_back(OriginalName(node), type);
  }
  if (forward.empty()) return;
  for (auto& node : *graph->mutable_node()) {
    if (!IsCall(node.op()) || node.attr().count(contract::kComposedOpAttr.name)) continue;
    const std::string name = OriginalName(node);
    for (const auto& call : forward) {
      if (!InGradientScope(name, call.first)) continue;
      (*node.mutable_attr())[contract::kComposedOpAttr.name].set_s(call.second + "Grad");
      break;
    }
  }
}

bool IsComposedOp(const tensorflow::NodeDef& node) {
  return IsCall(node.op()) && !StringAttr(node, contract::kComposedOpAttr.name).empty();
}

std::string ArtifactOpType(const tensorflow::NodeDef& node) {
  auto renamed = ArtifactTypeNames().find(node.op());
  if (renamed != ArtifactTypeNames().end()) return renamed->second;
  return IsComposedOp(node) ? StringAttr(node, contract::kComposedOpAttr.name) : node.op();
}

int ArtifactOutputCount(const tensorflow::NodeDef& node, int outputs) {
  auto it = node.attr().find(contract::kComposedOutputsAttr.name);
  if (!IsComposedOp(node) || it == node.attr().end() || it->second.i() < 0) return outputs;
  return std::min<int>(outputs, it->second.i());
}

std::map<std::string, tensorflow::DataType> LowPrecisionTensors(const tensorflow::GraphDef& graph) {
  std::map<std::string, tensorflow::DataType> result;
  for (const auto& node : graph.node()) {
    if (node.op() != kRoundOp || !node.attr().count("to") || node.input_size() == 0) continue;
    const tensorflow::DataType type = node.attr().at("to").type();
    auto output = node.attr().find(kRoundsOutputAttr);
    if (output != node.attr().end() && output->second.b()) {  // the op ran in `type`; this is the cast back
      const auto parsed = ParseInput(node.input(0));
      result.emplace(TensorName(parsed.first, parsed.second), type);
    } else {  // the cast to `type` before an op that computes in it
      result.emplace(node.name(), type);
    }
  }
  return result;
}

NameSet::NameSet(const tensorflow::GraphDef& graph) {
  for (const auto& node : graph.node()) names_.insert(node.name());
}

std::string NameSet::Fresh(const std::string& base) {
  std::string name = base;
  for (int i = 1; names_.count(name); ++i) name = base + "_" + std::to_string(i);
  names_.insert(name);
  return name;
}

std::string NameInModel(const std::string& base, const DumpModel& model, NameSet* names) {
  return names->Fresh(model.id > 0 ? base + "_m" + std::to_string(model.id) : base);
}

namespace {

// Appends `controls` ("^node") to `node`, except those it has and one on itself.
void AddControls(tensorflow::NodeDef* node, const std::set<std::string>& controls) {
  std::set<std::string> extra = controls;
  extra.erase("^" + node->name());
  for (const std::string& input : node->input()) extra.erase(input);
  for (const std::string& control : extra) node->add_input(control);
}

// True when TensorFlow shares the node's kernel among the graphs of a session (OpSegment::ShouldOwnKernel):
// stateful ops other than function calls.
bool HasSharedKernel(const tensorflow::NodeDef& node) {
  const tensorflow::OpDef* op_def = nullptr;
  if (!tensorflow::OpRegistry::Global()->LookUpOpDef(node.op(), &op_def).ok()) return false;
  return op_def->is_stateful() && node.op() != "PartitionedCall" && node.op() != "StatefulPartitionedCall";
}

// The forwarder that takes the name of `node`, which now runs as `source`.
tensorflow::NodeDef Forwarder(const tensorflow::NodeDef& node, const std::string& name, const std::string& source,
                              const Followers& follow) {
  tensorflow::NodeDef forwarder;
  forwarder.set_name(name);
  forwarder.set_device(node.device());
  tensorflow::DataTypeVector input_types, output_types;
  NodeTypes(node, &input_types, &output_types);
  if (output_types.empty()) {
    forwarder.set_op("NoOp");
    forwarder.add_input("^" + source);
  } else {
    forwarder.set_op("IdentityN");
    auto* types = (*forwarder.mutable_attr())["T"].mutable_list();
    for (int i = 0; i < static_cast<int>(output_types.size()); ++i) {
      auto replacement = follow.replacements.find(i);
      forwarder.add_input(replacement != follow.replacements.end() ? replacement->second : TensorName(source, i));
      types->add_type(tensorflow::BaseType(output_types[i]));
    }
  }
  std::set<std::string> controls;
  for (const std::string& wait : follow.waits) controls.insert("^" + wait);
  AddControls(&forwarder, controls);
  return forwarder;
}

void RedirectColocation(tensorflow::GraphDef* graph, const std::map<std::string, std::string>& renamed) {
  for (auto& node : *graph->mutable_node()) {
    auto it = node.mutable_attr()->find("_class");
    if (it == node.mutable_attr()->end()) continue;
    for (std::string& group : *it->second.mutable_list()->mutable_s()) {
      if (group.rfind("loc:@", 0) != 0) continue;
      auto target = renamed.find(group.substr(5));
      if (target != renamed.end()) group = "loc:@" + target->second;
    }
  }
}

}  // namespace

std::map<std::string, std::string> FollowOps(tensorflow::GraphDef* graph,
                                             const std::map<std::string, Followers>& followers, bool forward_fetches,
                                             const std::set<std::string>& fetched, const std::string& suffix,
                                             NameSet* names) {
  std::map<std::string, std::string> renamed;
  if (followers.empty()) return renamed;
  std::set<std::string> observers;  // not rewired: they are what the readers wait for
  for (const auto& [op, follow] : followers) {
    for (const auto& replacement : follow.replacements) observers.insert(ParseInput(replacement.second).first);
    observers.insert(follow.waits.begin(), follow.waits.end());
  }
  // Readers: data readers read the replacements, and everything that reads or waits for an op waits for it.
  for (auto& node : *graph->mutable_node()) {
    if (observers.count(node.name())) continue;
    std::set<std::string> controls;
    for (auto& input : *node.mutable_input()) {
      const auto parsed = ParseInput(input);
      auto follow = followers.find(parsed.first);
      if (follow == followers.end()) continue;
      for (const std::string& wait : follow->second.waits) controls.insert("^" + wait);
      if (parsed.second < 0) {
        for (const auto& replacement : follow->second.replacements) {
          controls.insert("^" + ParseInput(replacement.second).first);
        }
        continue;
      }
      auto replacement = follow->second.replacements.find(parsed.second);
      if (replacement != follow->second.replacements.end()) input = replacement->second;
    }
    AddControls(&node, controls);
  }
  if (!forward_fetches) return renamed;
  // Fetched ops (and ops with a shared kernel) are renamed, and a forwarder takes their name.
  std::vector<tensorflow::NodeDef> forwarders;
  for (auto& node : *graph->mutable_node()) {
    auto follow = followers.find(node.name());
    if (follow == followers.end() || !(fetched.count(node.name()) || HasSharedKernel(node))) continue;
    const std::string name = node.name();
    RememberOriginalName(&node);
    node.set_name(names->Fresh(name + "/" + suffix));
    renamed[name] = node.name();
    forwarders.push_back(Forwarder(node, name, node.name(), follow->second));
  }
  if (renamed.empty()) return renamed;
  for (auto& node : *graph->mutable_node()) {  // every reference follows the rename
    for (auto& input : *node.mutable_input()) {
      const auto parsed = ParseInput(input);
      auto it = renamed.find(parsed.first);
      if (it == renamed.end()) continue;
      input = parsed.second < 0 ? "^" + it->second : TensorName(it->second, parsed.second);
    }
  }
  for (auto& forwarder : forwarders) *graph->add_node() = std::move(forwarder);
  RedirectColocation(graph, renamed);
  return renamed;
}

}  // namespace npu_bridge
