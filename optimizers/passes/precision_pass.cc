// Ascend precision modes on the executed graph (order 200).
//
// A float32 tensor "rounded through fp16" is an NpuRound (ops/kernels/round_kernels.cc; on a GPU device, which
// has no NpuRound kernel, a Cast float->half and a Cast half->float): the consumer computes in float32 on values
// that fp16 can represent, which is exactly fp16 inputs with fp32 accumulation (Ascend's cube units). The
// Python precision step turns precision_mode, customize_dtypes, the mixed-precision lists and the backend into
// the pass plan (pass_contract.h); this pass applies it:
//   1. Rules round (or keep) the float inputs and outputs of the ops they select (cube and fp16 modes,
//      customize_dtypes).
//   2. Mixed modes: the region (mixed_region.h) rounds its float inputs and outputs through fp16 / bf16, or,
//      on the gpu backend, really computes in fp16 / bf16 (mixed_convert.h).
//   3. Ops marked _keep_dtype are left out of both.
// Outputs are rounded before inputs, and rounding that is already there (an earlier step's, or values that
// only moved since) is recognised, so no tensor is rounded twice.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "optimizers/graph/graph_edit.h"
#include "optimizers/graph/mixed_convert.h"
#include "optimizers/graph/mixed_region.h"
#include "optimizers/graph/op_classes.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/util/device_name_utils.h"

namespace npu_bridge {
namespace {

using tensorflow::DataType;
using tensorflow::NodeDef;

// What to do with the float slots of an op: a dtype per index, or for every slot.
struct SlotSpec {
  bool has_default = false;
  DataType all = tensorflow::DT_INVALID;
  std::map<int, DataType> by_index;

  // DT_INVALID: leave the slot alone.
  DataType For(int index) const {
    auto it = by_index.find(index);
    if (it != by_index.end()) return it->second;
    return has_default ? all : tensorflow::DT_INVALID;
  }
};

// Slot -1 stands for every float32 slot; the dtypes round through float16 / bfloat16 or keep float32.
absl::Status ReadSlots(const tensorflow::NameAttrList& record, contract::RecordField slots_field,
                       contract::RecordField dtypes_field, SlotSpec* spec) {
  std::vector<int64_t> slots;
  std::vector<DataType> dtypes;
  absl::Status status = GetField(record, slots_field, &slots);
  if (status.ok()) status = GetField(record, dtypes_field, &dtypes);
  if (!status.ok()) return status;
  if (slots.size() != dtypes.size()) {
    return absl::InvalidArgumentError(std::string("npu_bridge: a precision rule has ") + std::to_string(slots.size()) +
                                      " " + slots_field.name + " but " + std::to_string(dtypes.size()) + " " +
                                      dtypes_field.name);
  }
  for (size_t k = 0; k < slots.size(); ++k) {
    if (dtypes[k] != tensorflow::DT_HALF && dtypes[k] != tensorflow::DT_BFLOAT16 && dtypes[k] != tensorflow::DT_FLOAT) {
      return absl::InvalidArgumentError(std::string("npu_bridge: a precision rule's ") + dtypes_field.name + " holds " +
                                        tensorflow::DataTypeString(dtypes[k]) +
                                        "; the allowed dtypes are float16, bfloat16 and float32");
    }
    if (slots[k] < -1) {
      return absl::InvalidArgumentError(std::string("npu_bridge: a precision rule's ") + slots_field.name + " holds " +
                                        std::to_string(slots[k]) + "; slots are >= 0, or -1 for all");
    }
    if (slots[k] == -1) {
      spec->has_default = true;
      spec->all = dtypes[k];
    } else {
      spec->by_index[static_cast<int>(slots[k])] = dtypes[k];
    }
  }
  return absl::OkStatus();
}

struct Rule {
  SlotSpec inputs, outputs;
};

class RuleSet {
 public:
  absl::Status Build(const std::vector<tensorflow::NameAttrList>& records) {
    for (const tensorflow::NameAttrList& record : records) {
      Rule rule;
      std::string selector, target;
      absl::Status status = GetField(record, contract::kRuleSelector, &selector);
      if (status.ok()) status = GetField(record, contract::kRuleTarget, &target);
      if (status.ok()) status = ReadSlots(record, contract::kRuleInputSlots, contract::kRuleInputDtypes, &rule.inputs);
      if (status.ok()) {
        status = ReadSlots(record, contract::kRuleOutputSlots, contract::kRuleOutputDtypes, &rule.outputs);
      }
      if (!status.ok()) return status;
      if (selector == "type" && target == "*") {
        default_ = std::make_unique<Rule>(rule);
      } else if (selector == "type") {
        by_type_[target] = rule;
      } else if (selector == "name") {
        by_name_[target] = rule;
      } else {
        return absl::InvalidArgumentError("npu_bridge: a precision rule's selector is '" + selector +
                                          "'; the selectors are type and name");
      }
    }
    return absl::OkStatus();
  }

  // Node name rules win over op type rules, which win over the rule for every op.
  const Rule* Find(const NodeDef& node) const {
    auto by_name = by_name_.find(node.name());
    if (by_name != by_name_.end()) return &by_name->second;
    auto by_type = by_type_.find(node.op());
    if (by_type != by_type_.end()) return &by_type->second;
    return default_.get();
  }

 private:
  std::unordered_map<std::string, Rule> by_name_, by_type_;
  std::unique_ptr<Rule> default_;
};

bool IsKept(const NodeDef& node) {
  auto it = node.attr().find(contract::kKeepDtypeAttr.name);
  return it != node.attr().end() && (it->second.i() != 0 || it->second.b());
}

// A cast float -> low precision.
bool IsDownCast(const NodeDef& node, DataType* lowp) {
  if (node.op() != "Cast" || TypeAttr(node, "SrcT") != tensorflow::DT_FLOAT) return false;
  *lowp = TypeAttr(node, "DstT");
  return IsLowPrecision(*lowp);
}

bool IsUpCast(const NodeDef& node) {
  return node.op() == "Cast" && IsLowPrecision(TypeAttr(node, "SrcT")) &&
         TypeAttr(node, "DstT") == tensorflow::DT_FLOAT;
}

// An NpuRound; sets *lowp to the type it rounds through.
bool IsRound(const NodeDef& node, DataType* lowp) {
  if (node.op() != kRoundOp) return false;
  *lowp = TypeAttr(node, "to");
  return true;
}

bool OnGpu(const std::string& device) {
  tensorflow::DeviceNameUtils::ParsedName parsed;
  return tensorflow::DeviceNameUtils::ParseFullName(device, &parsed) && parsed.has_type && parsed.type == "GPU";
}

class PrecisionPass : public RewritePass {
 public:
  std::string name() const override { return "precision"; }

  bool Enabled(const PassPlan& plan, const tensorflow::grappler::GrapplerItem&) const override {
    return plan.Get(contract::kPrecisionRewrite);
  }

  absl::Status Run(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item, tensorflow::GraphDef* graph,
                   bool* changed) override {
    RuleSet rules;
    absl::Status status = rules.Build(plan.Get(contract::kPrecisionRules));
    DataType mixed = tensorflow::DT_INVALID;
    if (status.ok()) status = MixedDtype(plan.Get(contract::kPrecisionMixedDtype), &mixed);
    if (!status.ok()) return status;
    GraphEditor editor(graph);
    changed_ = changed;
    const std::set<std::string> fetched = FetchedNodes(item);

    std::set<std::string> region;
    if (mixed != tensorflow::DT_INVALID) {
      MixedLists lists;
      for (const std::string& op : plan.Get(contract::kPrecisionMixedWhite)) lists.white.insert(op);
      for (const std::string& op : plan.Get(contract::kPrecisionMixedBlack)) lists.black.insert(op);
      region = MixedRegion(editor, lists, [&](const NodeDef& node) { return IsKept(node) || rules.Find(node); });
      if (plan.Get(contract::kPrecisionMixedConvert)) {
        if (ConvertRegion(&editor, region, fetched, mixed)) Changed();
        region.clear();
      }
    }
    Rule region_rule;
    region_rule.inputs.has_default = region_rule.outputs.has_default = true;
    region_rule.inputs.all = region_rule.outputs.all = mixed;

    struct Planned {
      NodeDef* node;
      const Rule* rule;
      bool round_outputs;
      tensorflow::DataTypeVector in_types, out_types;
    };
    std::vector<Planned> planned;
    for (const std::string& name : editor.original_nodes()) {
      Planned p{editor.Find(name), nullptr, true, {}, {}};
      if (!NodeTypes(*p.node, &p.in_types, &p.out_types) || !IsComputingNode(*p.node, p.in_types) || IsKept(*p.node)) {
        continue;
      }
      p.rule = rules.Find(*p.node);
      if (p.rule == nullptr && region.count(name)) {
        p.rule = &region_rule;
        p.round_outputs = !PreservesValues(p.node->op());  // its inputs are rounded, so are its outputs
      }
      if (p.rule != nullptr) planned.push_back(p);
    }
    for (const Planned& p : planned) {
      std::map<int, std::string> rounded_outputs;
      for (int o = 0; p.round_outputs && o < static_cast<int>(p.out_types.size()); ++o) {
        const DataType want = p.rule->outputs.For(o);
        if (p.out_types[o] != tensorflow::DT_FLOAT || !IsLowPrecision(want)) continue;
        const std::string rounded = RoundOutput(&editor, *p.node, o, want);
        if (!rounded.empty()) rounded_outputs[o] = rounded;
      }
      if (!rounded_outputs.empty() && fetched.count(p.node->name())) {
        editor.ReplaceFetchedOutputs(p.node, p.out_types, rounded_outputs);
        Changed();
      }
    }
    std::map<std::string, bool> rounded;  // tensor -> holds values rounded through the region's dtype
    for (const Planned& p : planned) {
      for (int i = 0; i < static_cast<int>(p.in_types.size()); ++i) {
        const DataType want = p.rule->inputs.For(i);
        if (p.in_types[i] != tensorflow::DT_FLOAT || !IsLowPrecision(want)) continue;
        if (RoundedAlready(editor, p.node->input(i), want, region, &rounded)) continue;
        RoundInput(&editor, p.node, i, want);
      }
    }
    return absl::OkStatus();
  }

 private:
  void Changed() { *changed_ = true; }

  static absl::Status MixedDtype(const std::string& name, DataType* dtype) {
    if (name == "float16") {
      *dtype = tensorflow::DT_HALF;
    } else if (name == "bfloat16") {
      *dtype = tensorflow::DT_BFLOAT16;
    } else if (!name.empty()) {
      return absl::InvalidArgumentError(std::string("npu_bridge: ") + contract::kPrecisionMixedDtype.name + " is '" +
                                        name + "'; the values are float16, bfloat16 or empty");
    }
    return absl::OkStatus();
  }

  // True when `tensor` is a float32 value rounded through a low-precision type (an NpuRound or a cast pair); sets
  // *lowp to it.
  bool IsRounding(const GraphEditor& editor, const std::string& tensor, DataType* lowp) const {
    const auto parsed = ParseInput(tensor);
    const NodeDef* up = editor.Find(parsed.first);
    if (up != nullptr && parsed.second == 0 && IsRound(*up, lowp)) return true;
    if (up == nullptr || parsed.second != 0 || !IsUpCast(*up) || up->input_size() == 0) return false;
    auto down_input = ParseInput(up->input(0));
    const NodeDef* down = editor.Find(down_input.first);
    if (down != nullptr && down->op() == "NpuSaturateFp16") {  // the simulated device's fp16 saturation
      down_input = ParseInput(down->input(0));
      down = editor.Find(down_input.first);
    }
    return down != nullptr && down_input.second == 0 && IsDownCast(*down, lowp) && down->input_size() > 0;
  }

  // True when `tensor` only holds values `lowp` represents: it comes from a rounding, or from ops that move
  // or select values (Identity, Enter, Reshape, MaxPool, ..., and region ops that preserve values, whose
  // inputs are rounded) reading only such tensors. Loops count as not rounded (pessimistic: at worst a
  // value is rounded twice, which changes nothing).
  bool RoundedAlready(const GraphEditor& editor, const std::string& tensor, DataType lowp,
                      const std::set<std::string>& region, std::map<std::string, bool>* memo) const {
    const auto parsed = ParseInput(tensor);
    const std::string key = TensorName(parsed.first, parsed.second) + "|" + tensorflow::DataTypeString(lowp);
    auto it = memo->find(key);
    if (it != memo->end()) return it->second;
    (*memo)[key] = false;
    DataType current;
    bool result = false;
    const NodeDef* producer = editor.Find(parsed.first);
    if (IsRounding(editor, tensor, &current)) {
      result = current == lowp;
    } else if (producer == nullptr) {
      result = false;
    } else if (producer->op() == "Const") {
      result = producer->name().find("/npu_round_") != std::string::npos;  // folded roundings
    } else if (PreservesValues(producer->op()) && region.count(producer->name())) {
      result = true;
    } else if (PreservesValues(producer->op()) ||
               (MovesValues(producer->op()) && !IsStructuralOp(producer->op()) && producer->input_size() > 0)) {
      tensorflow::DataTypeVector in_types, out_types;
      int float_inputs = 0;
      result = NodeTypes(*producer, &in_types, &out_types);
      for (int i = 0; result && i < static_cast<int>(in_types.size()); ++i) {
        if (in_types[i] != tensorflow::DT_FLOAT) continue;
        ++float_inputs;
        result = RoundedAlready(editor, producer->input(i), lowp, region, memo);
      }
      result = result && float_inputs > 0;  // a variable read or a source holds values of any precision
    }
    (*memo)[key] = result;
    return result;
  }

  // Returns the float32 tensor holding `tensor` rounded through `lowp`, adding the rounding once, and sets
  // *reader to the rounding node that reads `tensor`.
  std::string RoundedTensor(GraphEditor* editor, const std::string& tensor, DataType lowp, std::string* reader) {
    const auto parsed = ParseInput(tensor);
    const std::string suffix =
        std::string(lowp == tensorflow::DT_HALF ? "fp16" : "bf16") + "_" + std::to_string(parsed.second);
    const std::string base = parsed.first + "/npu_round_" + suffix;
    const NodeDef* existing = editor->Find(base);
    DataType current;
    if (existing != nullptr && IsRound(*existing, &current) && current == lowp) {
      *reader = base;
      return base;
    }
    if (existing != nullptr && IsUpCast(*existing) && existing->input_size() > 0) {
      *reader = ParseInput(existing->input(0)).first;
      return base;
    }
    // Other Grappler passes may have moved or folded earlier roundings: never reuse a taken name.
    const std::string name = editor->UniqueName(base);
    const NodeDef* source = editor->Find(parsed.first);
    const std::string device = source == nullptr ? "" : source->device();
    const std::string input = TensorName(parsed.first, parsed.second);
    Changed();
    if (OnGpu(device)) {
      *reader = editor->UniqueName(parsed.first + "/npu_to_" + suffix);
      editor->AddCast(*reader, input, tensorflow::DT_FLOAT, lowp, device);
      editor->AddCast(name, *reader, lowp, tensorflow::DT_FLOAT, device);
      return name;
    }
    NodeDef* round = editor->AddNode(name, kRoundOp, device);
    editor->AddInput(round, input);
    (*round->mutable_attr())["to"].set_type(lowp);
    *reader = name;
    return name;
  }

  void RoundInput(GraphEditor* editor, NodeDef* node, int position, DataType lowp) {
    std::string reader;
    editor->Rewire(node, position, RoundedTensor(editor, node->input(position), lowp, &reader));
    Changed();
  }

  // Makes the consumers of `node:index` read it rounded; returns the rounded tensor ("" if it was already).
  std::string RoundOutput(GraphEditor* editor, const NodeDef& node, int index, DataType lowp) {
    const std::string tensor = TensorName(node.name(), index);
    // Already rounded when every consumer rounds or casts it to `lowp` (an earlier run's or the script's casts).
    const auto consumers = editor->Consumers(tensor);
    bool rounded_already = !consumers.empty();
    for (auto& [consumer, unused] : consumers) {
      DataType current;
      rounded_already =
          rounded_already && (IsDownCast(*consumer, &current) || IsRound(*consumer, &current)) && current == lowp;
    }
    if (rounded_already) return "";
    std::string reader;
    const std::string rounded = RoundedTensor(editor, tensor, lowp, &reader);
    NodeDef* round = editor->Find(rounded);
    if (round->op() == kRoundOp) (*round->mutable_attr())[kRoundsOutputAttr].set_b(true);
    editor->RedirectConsumers(tensor, rounded, reader);
    Changed();
    return rounded;
  }

  bool* changed_ = nullptr;
};
}  // namespace

REGISTER_NPU_REWRITE_PASS(200, PrecisionPass);

}  // namespace npu_bridge
