// Ascend precision modes on the executed graph (order 200).
//
// A float32 tensor "rounded through fp16" is a Cast float->half followed by a Cast half->float: the consumer
// computes in float32 on values that fp16 can represent, which is exactly fp16 inputs with fp32
// accumulation (Ascend's cube units). The Python precision step turns precision_mode, customize_dtypes and
// the backend into rules (contract::kPrecisionRules, records in pass_contract.h); this pass applies them:
//   1. With bf16 mixed precision, the rounding casts TensorFlow's fp16-emulating AMP pass inserted are
//      retargeted to bfloat16.
//   2. Rules round (or keep) the float inputs and outputs of the ops they select.
//   3. Ops marked _keep_dtype read their inputs before rounding and their consumers read their unrounded
//      outputs; an op that AMP really converted to fp16 (GPU) is converted back with casts around it.
// Every step recognises rounding that is already there (AMP's casts, an earlier rule's), so no tensor is
// rounded twice.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "optimizers/graph/graph_edit.h"
#include "optimizers/graph/op_classes.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace {

using tensorflow::DataType;
using tensorflow::NodeDef;

constexpr char kAmpSuffix[] = "AutoMixedPrecision";

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

bool IsAmpCast(const NodeDef& node) { return node.op() == "Cast" && node.name().find(kAmpSuffix) != std::string::npos; }

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

class PrecisionPass : public RewritePass {
 public:
  std::string name() const override { return "precision"; }

  bool Enabled(const PassOptions& options, const tensorflow::grappler::GrapplerItem&) const override {
    return options.Get(contract::kPrecisionRewrite);
  }

  absl::Status Run(const PassOptions& options, const tensorflow::grappler::GrapplerItem& item,
                   tensorflow::GraphDef* graph, bool* changed) override {
    RuleSet rules;
    absl::Status status = rules.Build(options.Get(contract::kPrecisionRules));
    if (!status.ok()) return status;
    GraphEditor editor(graph);
    changed_ = changed;
    if (options.Get(contract::kPrecisionAmpDtype) == "bfloat16") RetargetAmpCasts(&editor);

    // AMP's rounding is undone first for kept ops and float32 slots (it exists because AMP put the op in
    // fp16); rules then round. A kept op still reads rounded values from a producer that a rule makes fp16,
    // as on Ascend, where a float32 op after an fp16 op reads its fp16 output.
    struct Planned {
      NodeDef* node;
      const Rule* rule;
      tensorflow::DataTypeVector in_types, out_types;
    };
    std::vector<Planned> planned;
    for (const std::string& name : editor.original_nodes()) {
      Planned p{editor.Find(name), nullptr, {}, {}};
      if (!NodeTypes(*p.node, &p.in_types, &p.out_types) || !IsComputingNode(*p.node, p.in_types)) {
        continue;
      }
      if (IsKept(*p.node)) {
        Keep(&editor, p.node, p.in_types, p.out_types);
        continue;
      }
      p.rule = rules.Find(*p.node);
      if (p.rule != nullptr) planned.push_back(p);
    }
    for (const Planned& p : planned) {
      for (int i = 0; i < static_cast<int>(p.in_types.size()); ++i) {
        if (p.in_types[i] == tensorflow::DT_FLOAT && p.rule->inputs.For(i) == tensorflow::DT_FLOAT) {
          UnroundAmpInput(&editor, p.node, i);
        }
      }
      for (int o = 0; o < static_cast<int>(p.out_types.size()); ++o) {
        if (p.out_types[o] == tensorflow::DT_FLOAT && p.rule->outputs.For(o) == tensorflow::DT_FLOAT) {
          UnroundAmpOutput(&editor, *p.node, o);
        }
      }
    }
    const std::set<std::string> fetched = FetchedNodes(item);
    for (const Planned& p : planned) {
      std::map<int, std::string> rounded_outputs;
      for (int o = 0; o < static_cast<int>(p.out_types.size()); ++o) {
        const DataType want = p.rule->outputs.For(o);
        if (p.out_types[o] != tensorflow::DT_FLOAT || !IsLowPrecision(want)) continue;
        const std::string rounded = RoundOutput(&editor, *p.node, o, want);
        if (!rounded.empty()) rounded_outputs[o] = rounded;
      }
      if (!rounded_outputs.empty() && fetched.count(p.node->name())) {
        editor.ReplaceFetchedOutputs(p.node, p.out_types, rounded_outputs);
        Changed();
      }
      for (int i = 0; i < static_cast<int>(p.in_types.size()); ++i) {
        const DataType want = p.rule->inputs.For(i);
        if (p.in_types[i] == tensorflow::DT_FLOAT && IsLowPrecision(want)) RoundInput(&editor, p.node, i, want);
      }
    }
    return absl::OkStatus();
  }

 private:
  void Changed() { *changed_ = true; }

  // TensorFlow's AMP only emulates fp16 on CPU; its casts mark the regions, bfloat16 is what is wanted. Each
  // fp16 island that starts at one of AMP's casts to fp16 (possibly reshaped or transposed in fp16 by the
  // arithmetic optimizer, or a constant folded to fp16) becomes bfloat16 as a whole, so types stay consistent.
  void RetargetAmpCasts(GraphEditor* editor) {
    std::vector<NodeDef*> pending;
    std::set<NodeDef*> seen;
    for (const std::string& name : editor->original_nodes()) {
      NodeDef* node = editor->Find(name);
      DataType lowp;
      if (IsAmpCast(*node) && IsDownCast(*node, &lowp) && lowp == tensorflow::DT_HALF) pending.push_back(node);
    }
    while (!pending.empty()) {
      NodeDef* node = pending.back();
      pending.pop_back();
      if (!seen.insert(node).second) continue;
      tensorflow::DataTypeVector in_types, out_types;
      if (!NodeTypes(*node, &in_types, &out_types)) continue;
      for (int i = 0; i < static_cast<int>(in_types.size()); ++i) {
        if (in_types[i] == tensorflow::DT_HALF) pending.push_back(editor->Find(ParseInput(node->input(i)).first));
      }
      for (int o = 0; o < static_cast<int>(out_types.size()); ++o) {
        if (out_types[o] != tensorflow::DT_HALF) continue;
        for (auto& [consumer, unused] : editor->Consumers(TensorName(node->name(), o))) pending.push_back(consumer);
      }
      ToBfloat16(node);
    }
  }

  void ToBfloat16(NodeDef* node) {
    if (node->op() == "Const") {
      tensorflow::Tensor half;
      if (TypeAttr(*node, "dtype") != tensorflow::DT_HALF || !half.FromProto(node->attr().at("value").tensor())) {
        return;
      }
      tensorflow::Tensor bf16(tensorflow::DT_BFLOAT16, half.shape());
      auto from = half.flat<Eigen::half>();
      auto to = bf16.flat<tensorflow::bfloat16>();
      for (int64_t i = 0; i < from.size(); ++i) to(i) = static_cast<tensorflow::bfloat16>(static_cast<float>(from(i)));
      bf16.AsProtoTensorContent((*node->mutable_attr())["value"].mutable_tensor());
    }
    for (auto& [attr, value] : *node->mutable_attr()) {
      if (value.value_case() == tensorflow::AttrValue::kType && value.type() == tensorflow::DT_HALF) {
        value.set_type(tensorflow::DT_BFLOAT16);
      }
    }
    Changed();
  }

  // If `tensor` is a float32 value rounded through a low-precision type (by AMP's casts only, if
  // `amp_only`), returns the unrounded tensor.
  bool RoundedFrom(const GraphEditor& editor, const std::string& tensor, bool amp_only, std::string* original,
                   DataType* lowp) const {
    const auto parsed = ParseInput(tensor);
    const NodeDef* up = editor.Find(parsed.first);
    if (up == nullptr || parsed.second != 0 || !IsUpCast(*up) || up->input_size() == 0) return false;
    auto down_input = ParseInput(up->input(0));
    const NodeDef* down = editor.Find(down_input.first);
    if (down != nullptr && down->op() == "NpuSaturateFp16") {  // the simulated device's fp16 saturation
      down_input = ParseInput(down->input(0));
      down = editor.Find(down_input.first);
    }
    if (down == nullptr || down_input.second != 0 || !IsDownCast(*down, lowp) || down->input_size() == 0) {
      return false;
    }
    if (amp_only && !(IsAmpCast(*up) && IsAmpCast(*down))) return false;
    *original = down->input(0);
    return true;
  }

  // Returns the float32 tensor holding `tensor` rounded through `lowp`, adding the two casts once.
  std::string RoundedTensor(GraphEditor* editor, const std::string& tensor, DataType lowp) {
    const auto parsed = ParseInput(tensor);
    const std::string suffix =
        std::string(lowp == tensorflow::DT_HALF ? "fp16" : "bf16") + "_" + std::to_string(parsed.second);
    const std::string up_base = parsed.first + "/npu_round_" + suffix;
    const NodeDef* existing = editor->Find(up_base);
    if (existing != nullptr && IsUpCast(*existing)) return up_base;
    // Other Grappler passes may have moved or folded earlier casts: never reuse a taken name.
    const std::string down_name = editor->UniqueName(parsed.first + "/npu_to_" + suffix);
    const std::string up_name = editor->UniqueName(up_base);
    const NodeDef* source = editor->Find(parsed.first);
    const std::string device = source == nullptr ? "" : source->device();
    editor->AddCast(down_name, TensorName(parsed.first, parsed.second), tensorflow::DT_FLOAT, lowp, device);
    editor->AddCast(up_name, down_name, lowp, tensorflow::DT_FLOAT, device);
    Changed();
    return up_name;
  }

  void RoundInput(GraphEditor* editor, NodeDef* node, int position, DataType lowp) {
    std::string original;
    DataType current;
    const std::string input = node->input(position);
    if (RoundedFrom(*editor, input, /*amp_only=*/false, &original, &current) && current == lowp) return;
    const NodeDef* producer = editor->Find(ParseInput(input).first);
    if (producer != nullptr && producer->op() == "Const" && producer->name().find("/npu_round_") != std::string::npos) {
      return;  // constant folding turned our rounding casts into a rounded constant
    }
    editor->Rewire(node, position, RoundedTensor(editor, input, lowp));
    Changed();
  }

  // Makes the consumers of `node:index` read it rounded; returns the rounded tensor ("" if it was already).
  std::string RoundOutput(GraphEditor* editor, const NodeDef& node, int index, DataType lowp) {
    const std::string tensor = TensorName(node.name(), index);
    // Already rounded when every consumer casts it to `lowp` (AMP's or the script's casts).
    const auto consumers = editor->Consumers(tensor);
    bool rounded_already = !consumers.empty();
    for (auto& [consumer, unused] : consumers) {
      DataType current;
      rounded_already = rounded_already && IsDownCast(*consumer, &current) && current == lowp;
    }
    if (rounded_already) return "";
    const std::string rounded = RoundedTensor(editor, tensor, lowp);
    editor->RedirectConsumers(tensor, rounded, ParseInput(editor->Find(rounded)->input(0)).first);
    Changed();
    return rounded;
  }

  void UnroundAmpInput(GraphEditor* editor, NodeDef* node, int position) {
    std::string original;
    DataType lowp;
    if (!RoundedFrom(*editor, node->input(position), /*amp_only=*/true, &original, &lowp)) return;
    editor->Rewire(node, position, original);
    Changed();
  }

  // Consumers that read `node:index` through AMP's rounding casts read it directly.
  void UnroundAmpOutput(GraphEditor* editor, const NodeDef& node, int index) {
    const std::string tensor = TensorName(node.name(), index);
    for (auto& [down, unused] : editor->Consumers(tensor)) {
      DataType lowp;
      if (!IsAmpCast(*down) || !IsDownCast(*down, &lowp)) continue;
      for (auto& [up, unused_position] : editor->Consumers(down->name())) {
        if (!IsAmpCast(*up) || !IsUpCast(*up)) continue;
        for (auto& [consumer, position] : editor->Consumers(up->name())) {
          editor->Rewire(consumer, position, tensor);
          Changed();
        }
      }
    }
  }

  // A _keep_dtype op is left out of the rules, and AMP's fp16 treatment of it is undone: it computes in
  // float32 and its consumers read its float32 outputs.
  void Keep(GraphEditor* editor, NodeDef* node, const tensorflow::DataTypeVector& in_types,
            const tensorflow::DataTypeVector& out_types) {
    if (WasConvertedByAmp(*editor, *node)) {
      ConvertBack(editor, node);
      return;
    }
    for (int i = 0; i < static_cast<int>(in_types.size()); ++i) {
      if (in_types[i] == tensorflow::DT_FLOAT) UnroundAmpInput(editor, node, i);
    }
    for (int o = 0; o < static_cast<int>(out_types.size()); ++o) {
      if (out_types[o] == tensorflow::DT_FLOAT) UnroundAmpOutput(editor, *node, o);
    }
  }

  // AMP without emulation (GPU) changes the op's type attributes and feeds it through its own casts.
  bool WasConvertedByAmp(const GraphEditor& editor, const NodeDef& node) const {
    for (const std::string& input : node.input()) {
      const auto parsed = ParseInput(input);
      const NodeDef* producer = editor.Find(parsed.first);
      DataType lowp;
      if (parsed.second >= 0 && producer != nullptr && IsAmpCast(*producer) && IsDownCast(*producer, &lowp)) {
        return true;
      }
    }
    return false;
  }

  void ConvertBack(GraphEditor* editor, NodeDef* node) {
    tensorflow::DataTypeVector old_in, old_out;
    if (!NodeTypes(*node, &old_in, &old_out)) return;
    for (auto& [attr, value] : *node->mutable_attr()) {
      if (value.value_case() == tensorflow::AttrValue::kType && IsLowPrecision(value.type())) {
        value.set_type(tensorflow::DT_FLOAT);
      }
    }
    Changed();
    for (int i = 0; i < static_cast<int>(old_in.size()); ++i) {
      if (!IsLowPrecision(old_in[i])) continue;
      const auto parsed = ParseInput(node->input(i));
      const NodeDef* producer = editor->Find(parsed.first);
      DataType lowp;
      if (producer != nullptr && IsAmpCast(*producer) && IsDownCast(*producer, &lowp)) {
        editor->Rewire(node, i, producer->input(0));
      } else {
        editor->Rewire(node, i,
                       editor->AddCast(node->name() + "/npu_keep_in_" + std::to_string(i), node->input(i), old_in[i],
                                       tensorflow::DT_FLOAT, node->device()));
      }
    }
    for (int o = 0; o < static_cast<int>(old_out.size()); ++o) {
      if (!IsLowPrecision(old_out[o])) continue;
      const std::string tensor = TensorName(node->name(), o);
      std::string back_cast;
      for (auto& [consumer, position] : editor->Consumers(tensor)) {
        if (consumer->op() == "Cast" && TypeAttr(*consumer, "DstT") == tensorflow::DT_FLOAT) {
          (*consumer->mutable_attr())["SrcT"].set_type(tensorflow::DT_FLOAT);  // now an identity
          continue;
        }
        if (back_cast.empty()) {
          back_cast = editor->AddCast(node->name() + "/npu_keep_out_" + std::to_string(o), tensor, tensorflow::DT_FLOAT,
                                      old_out[o], node->device());
        }
        editor->Rewire(consumer, position, back_cast);
      }
    }
  }

  bool* changed_ = nullptr;
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(200, PrecisionPass);

}  // namespace npu_bridge
