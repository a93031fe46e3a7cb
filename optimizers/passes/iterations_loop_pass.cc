// iterations_per_loop: when a run fetches an IterationOp (made by util.IterationPerLoop) and the session's
// iterations_per_loop option is N > 1, this pass wraps the work of that run in a TensorFlow while loop
// (TF1 control-flow frame) that runs N times. As on the NPU, one sess.run then performs N training steps:
// the input pipeline (IteratorGetNext inside the loop) advances N batches, the global step N times, and every
// fetched tensor that is computed per step returns its value from the last step.
//
// How the graph is split:
//   * the fan-in of the run's fetches is divided into loop-invariant nodes, which stay outside and enter
//     the loop through constant Enter nodes, and per-step nodes, which move into the loop. Per-step are
//     stateful ops that are not state holders (assignments, GetNext, random ops, ...), readers of a
//     resource or ref tensor (ReadVariableOp, the Identity of a ref variable, ...), control-flow primitives
//     (so nested loops and conds move as a whole), the IterationOps, and everything downstream of those.
//     State holders (VarHandleOp, VariableV2, IteratorV2, ...), constants and placeholders stay outside.
//   * every per-step node that has no per-step input gets a control edge from the iteration marker
//     (NpuLoopIteration, fed by the loop counter; it depends on the loop pivot, so nothing runs in the final,
//     condition false, iteration); a control edge from an invariant node moves to the loop's entry.
//   * the loop runs with parallel_iterations = 1 and the counter's NextIteration waits for the fetched ops, so
//     step k+1 starts after every op of step k finished.
//   * steps count loop iterations, as on Ascend: the dump and overflow kernels of the graph (NpuDump,
//     NpuOverflowCheck) learn that one run takes N steps, and those inside the loop that their step is the
//     run's first step plus the iteration the marker recorded (ops/runtime/dump_steps.h).
//   * a fetched per-step node X moves into the loop as npu_iterations_loop/body/X; its outputs are carried
//     out as loop variables (Merge/Switch/NextIteration/Exit), and a node named X outside the loop (IdentityN,
//     or NoOp for an op without outputs) gives the run the values of the last step.
//   * nodes outside the fetches' fan-in that consume per-step nodes cannot run in this call; they are removed
//     from this call's graph (the session prunes them anyway).
// The IterationOp's NpuIterationsLoopGuard control input is removed when the loop is built. If the loop cannot
// be built, the guard's message says why and the run fails instead of silently doing one step.
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/runtime/iterations_loop.h"
#include "optimizers/graph/graph_util.h"
#include "optimizers/pass_contract.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/function.h"
#include "tensorflow/core/framework/node_def_util.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/tensor_shape.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace {

using tensorflow::DataType;
using tensorflow::GraphDef;
using tensorflow::NodeDef;

// Bool attr on the node that replaces a fetched IterationOp once the loop is built (makes the pass idempotent).
constexpr char kLoopBuiltAttr[] = "_npu_iterations_loop_built";
constexpr char kPrefix[] = "npu_iterations_loop";
constexpr char kFrameName[] = "npu_iterations_loop/frame";

struct InputRef {
  std::string node;
  int port = 0;
  bool control = false;
};

InputRef RefOf(const std::string& text) {
  auto parsed = ParseInput(text);
  return {parsed.first, parsed.second, parsed.second < 0};
}

std::string ControlText(const std::string& node) { return absl::StrCat("^", node); }

std::string NodeNameOf(const std::string& tensor_or_node) { return ParseInput(tensor_or_node).first; }

bool AttrIsTrue(const NodeDef& node, const char* name) {
  auto it = node.attr().find(name);
  return it != node.attr().end() && it->second.b();
}

bool IsControlFlowPrimitive(const std::string& op) {
  static const auto* ops = new std::unordered_set<std::string>{
      "Enter",     "RefEnter", "Exit",          "RefExit",          "Merge",    "RefMerge",      "Switch",
      "RefSwitch", "_SwitchN", "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger"};
  return ops->count(op) > 0;
}

bool CarriesState(DataType type) { return type == tensorflow::DT_RESOURCE || tensorflow::IsRefType(type); }

class IterationsLoopPass : public RewritePass {
 public:
  std::string name() const override { return "iterations_loop"; }

  // Also for iterations_per_loop 1: the run must then fail, and Run makes it fail before the step starts.
  bool Enabled(const PassPlan&, const tensorflow::grappler::GrapplerItem& item) const override {
    const std::set<std::string> fetched = FetchedNodes(item);
    for (const NodeDef& node : item.graph.node()) {
      if (fetched.count(node.name()) && AttrIsTrue(node, contract::kIterationOpAttr.name)) return true;
    }
    return false;
  }

  absl::Status Run(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item, GraphDef* graph,
                   bool* changed) override;
};

// Builds the loop for one call of the pass; one instance per Run.
class LoopBuilder {
 public:
  LoopBuilder(const tensorflow::grappler::GrapplerItem& item, GraphDef* graph, int64_t iterations)
      : item_(item), graph_(graph), iterations_(iterations) {}

  // The fetched IterationOps and their guards; false when nothing is fetched that needs a loop.
  bool FindIterationOps();
  // Splits the graph and builds the loop. On error the graph is unchanged.
  absl::Status Build();
  // Records `reason` in the guards, so the run fails with it; returns whether a guard changed.
  bool ReportFailure(const std::string& reason);

 private:
  absl::Status IndexGraph();
  absl::Status Classify();
  absl::Status CheckFeeds() const;
  absl::Status BuildCounter();
  absl::Status RewireInsideNodes();
  absl::Status CarryFetchesOut();
  void NumberSteps();
  void RemoveNodes();

  NodeDef* AddNode(const std::string& name, const std::string& op, const std::string& device,
                   std::initializer_list<std::string> inputs);
  NodeDef* AddEnter(const std::string& name, const std::string& input, DataType type, const std::string& device,
                    bool is_constant);
  absl::Status AddZeroConst(const std::string& name, DataType type, const std::string& device);
  const std::string& EnterFor(int source, int port);
  bool IsGuard(const std::string& node_name) const { return guards_.count(node_name) > 0; }
  int IndexOf(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }

  const tensorflow::grappler::GrapplerItem& item_;
  GraphDef* graph_;
  const int64_t iterations_;
  std::string device_;                          // device of the loop's control nodes
  std::vector<std::string> iteration_ops_;      // fetched IterationOps (their original names)
  std::unordered_set<std::string> guards_;      // guard nodes of those IterationOps
  std::vector<std::string> fetch_nodes_;        // fetched node names, in order, without duplicates
  std::unordered_map<std::string, int> index_;  // node name -> index in graph_ (before the rewrite)
  int original_size_ = 0;
  std::vector<tensorflow::DataTypeVector> output_types_;  // per original node
  std::vector<bool> inside_;                              // per original node: runs once per step
  std::vector<bool> remove_;                              // per original node: removed from this call's graph
  std::unordered_map<std::string, std::string> renamed_;  // fetched inside node -> its name in the loop
  std::unordered_map<std::string, std::string> enters_;   // "node:port" of an invariant -> its Enter
  std::unordered_set<std::string> entry_controls_;        // invariant nodes with control edges to per-step nodes
  std::string loop_cond_, pivot_, marker_, counter_exit_, counter_enter_, counter_next_;
};

bool LoopBuilder::FindIterationOps() {
  std::unordered_set<std::string> seen;
  for (const std::string& fetch : item_.fetch) {
    std::string name = NodeNameOf(fetch);
    if (seen.insert(name).second) fetch_nodes_.push_back(name);
  }
  std::unordered_map<std::string, const NodeDef*> by_name;
  for (const NodeDef& node : graph_->node()) by_name[node.name()] = &node;
  for (const std::string& name : fetch_nodes_) {
    auto it = by_name.find(name);
    if (it == by_name.end() || !AttrIsTrue(*it->second, contract::kIterationOpAttr.name)) continue;
    iteration_ops_.push_back(name);
    if (device_.empty()) device_ = it->second->device();
    for (const std::string& input : it->second->input()) {
      InputRef ref = RefOf(input);
      auto source = by_name.find(ref.node);
      if (ref.control && source != by_name.end() && source->second->op() == kGuardOp) guards_.insert(ref.node);
    }
  }
  return !iteration_ops_.empty();
}

bool LoopBuilder::ReportFailure(const std::string& reason) {
  const std::string message =
      absl::StrCat("iterations_per_loop: npu_bridge could not build the training loop around IterationOp '",
                   iteration_ops_.front(), "', so this sess.run fails instead of performing a single step: ", reason);
  bool changed = false;
  for (NodeDef& node : *graph_->mutable_node()) {
    if (!IsGuard(node.name())) continue;
    auto& attr = (*node.mutable_attr())[kGuardMessageAttr];
    if (attr.s() != message) {
      attr.set_s(message);
      changed = true;
    }
  }
  // The guard alone would run in parallel with the step; making every other source node wait for it means the
  // run fails before any of the step's work starts (fed nodes are replaced by TF and keep no control inputs).
  const std::set<std::string> fed = FedNodes(item_);
  for (NodeDef& node : *graph_->mutable_node()) {
    if (node.input_size() > 0 || IsGuard(node.name()) || fed.count(node.name())) continue;
    for (const std::string& guard : guards_) {
      node.add_input("^" + guard);
      changed = true;
    }
  }
  return changed;
}

absl::Status LoopBuilder::Build() {
  if (iterations_ > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("iterations_per_loop ", iterations_, " is too large"));
  }
  TF_RETURN_IF_ERROR(IndexGraph());
  TF_RETURN_IF_ERROR(Classify());
  TF_RETURN_IF_ERROR(CheckFeeds());
  // Everything below only adds nodes and edits inputs; checks that can fail come first where possible. A
  // failure half way returns an error and the caller discards the graph copy.
  TF_RETURN_IF_ERROR(BuildCounter());
  TF_RETURN_IF_ERROR(RewireInsideNodes());
  TF_RETURN_IF_ERROR(CarryFetchesOut());
  NumberSteps();
  RemoveNodes();
  return absl::OkStatus();
}

absl::Status LoopBuilder::IndexGraph() {
  tensorflow::FunctionLibraryDefinition library(tensorflow::OpRegistry::Global(), graph_->library());
  original_size_ = graph_->node_size();
  output_types_.resize(original_size_);
  for (int i = 0; i < original_size_; ++i) {
    const NodeDef& node = graph_->node(i);
    index_[node.name()] = i;
    const tensorflow::OpDef* op_def = nullptr;
    TF_RETURN_IF_ERROR(library.LookUpOpDef(node.op(), &op_def));
    TF_RETURN_IF_ERROR(tensorflow::OutputTypesForNode(node, *op_def, &output_types_[i]));
  }
  return absl::OkStatus();
}

absl::Status LoopBuilder::Classify() {
  tensorflow::FunctionLibraryDefinition library(tensorflow::OpRegistry::Global(), graph_->library());
  // The fan-in of the fetches (guards excluded).
  std::vector<bool> in_fanin(original_size_, false);
  std::deque<int> queue;
  for (const std::string& name : fetch_nodes_) {
    int i = IndexOf(name);
    if (i < 0) return absl::NotFoundError(absl::StrCat("fetched node '", name, "' is not in the graph"));
    if (!in_fanin[i]) {
      in_fanin[i] = true;
      queue.push_back(i);
    }
  }
  while (!queue.empty()) {
    const NodeDef& node = graph_->node(queue.front());
    queue.pop_front();
    for (const std::string& input : node.input()) {
      InputRef ref = RefOf(input);
      int source = IndexOf(ref.node);
      if (source < 0) return absl::NotFoundError(absl::StrCat("input '", input, "' of '", node.name(), "'"));
      if (IsGuard(ref.node) || in_fanin[source]) continue;
      in_fanin[source] = true;
      queue.push_back(source);
    }
  }
  // Per-step seeds, then everything in the fan-in downstream of them.
  inside_.assign(original_size_, false);
  std::vector<std::vector<int>> consumers(original_size_);
  std::unordered_set<std::string> iteration_ops(iteration_ops_.begin(), iteration_ops_.end());
  for (int i = 0; i < original_size_; ++i) {
    const NodeDef& node = graph_->node(i);
    bool reads_state = false;
    for (const std::string& input : node.input()) {
      InputRef ref = RefOf(input);
      if (IsGuard(ref.node)) continue;
      int source = IndexOf(ref.node);
      consumers[source].push_back(i);
      if (!ref.control && ref.port < static_cast<int>(output_types_[source].size()) &&
          CarriesState(output_types_[source][ref.port])) {
        reads_state = true;
      }
    }
    if (!in_fanin[i]) continue;
    const tensorflow::OpDef* op_def = nullptr;
    TF_RETURN_IF_ERROR(library.LookUpOpDef(node.op(), &op_def));
    bool holds_state = false;
    for (DataType type : output_types_[i]) holds_state = holds_state || CarriesState(type);
    bool state_holder = op_def->is_stateful() && holds_state && !reads_state;
    inside_[i] = iteration_ops.count(node.name()) > 0 || reads_state || IsControlFlowPrimitive(node.op()) ||
                 (op_def->is_stateful() && !state_holder);
  }
  // Marks, in `marked`, every node downstream of a per-step node whose fan-in membership is `fanin_side`.
  auto mark_downstream = [&](bool fanin_side, std::vector<bool>* marked) {
    for (int i = 0; i < original_size_; ++i) {
      if (inside_[i]) queue.push_back(i);
    }
    while (!queue.empty()) {
      int i = queue.front();
      queue.pop_front();
      for (int consumer : consumers[i]) {
        if (in_fanin[consumer] == fanin_side && !(*marked)[consumer]) {
          (*marked)[consumer] = true;
          queue.push_back(consumer);
        }
      }
    }
  };
  mark_downstream(true, &inside_);
  // Nodes outside the fan-in downstream of per-step nodes: removed from this call's graph.
  remove_.assign(original_size_, false);
  mark_downstream(false, &remove_);
  for (const std::string& guard : guards_) remove_[IndexOf(guard)] = true;
  return absl::OkStatus();
}

absl::Status LoopBuilder::CheckFeeds() const {
  for (const auto& feed : item_.feed) {
    int i = IndexOf(NodeNameOf(feed.first));
    if (i >= 0 && (inside_[i] || remove_[i])) {
      return absl::InvalidArgumentError(absl::StrCat("the run feeds '", feed.first,
                                                     "', which is computed in every training step; feed placeholders "
                                                     "(or tensors computed before the loop) only"));
    }
  }
  return absl::OkStatus();
}

NodeDef* LoopBuilder::AddNode(const std::string& name, const std::string& op, const std::string& device,
                              std::initializer_list<std::string> inputs) {
  NodeDef* node = graph_->add_node();
  node->set_name(name);
  node->set_op(op);
  node->set_device(device);
  for (const std::string& input : inputs) node->add_input(input);
  return node;
}

NodeDef* LoopBuilder::AddEnter(const std::string& name, const std::string& input, DataType type,
                               const std::string& device, bool is_constant) {
  NodeDef* enter = AddNode(name, tensorflow::IsRefType(type) ? "RefEnter" : "Enter", device, {input});
  auto& attr = *enter->mutable_attr();
  attr["T"].set_type(tensorflow::BaseType(type));
  attr["frame_name"].set_s(kFrameName);
  attr["is_constant"].set_b(is_constant);
  attr["parallel_iterations"].set_i(1);
  return enter;
}

absl::Status LoopBuilder::AddZeroConst(const std::string& name, DataType type, const std::string& device) {
  tensorflow::Tensor zero(type, tensorflow::TensorShape({}));
  if (type == tensorflow::DT_STRING) {
    zero.scalar<tensorflow::tstring>()() = "";
  } else if (tensorflow::DataTypeCanUseMemcpy(type)) {
    std::memset(zero.data(), 0, zero.TotalBytes());
  } else {
    return absl::UnimplementedError(absl::StrCat("a fetched tensor of type ", tensorflow::DataTypeString(type),
                                                 " cannot be carried out of the loop"));
  }
  NodeDef* node = AddNode(name, "Const", device, {});
  (*node->mutable_attr())["dtype"].set_type(type);
  zero.AsProtoTensorContent((*node->mutable_attr())["value"].mutable_tensor());
  return absl::OkStatus();
}

absl::Status LoopBuilder::BuildCounter() {
  const std::string p = kPrefix;
  auto int_const = [&](const std::string& name, int32_t value, std::initializer_list<std::string> inputs) {
    NodeDef* node = AddNode(name, "Const", device_, inputs);
    (*node->mutable_attr())["dtype"].set_type(tensorflow::DT_INT32);
    tensorflow::Tensor tensor(tensorflow::DT_INT32, tensorflow::TensorShape({}));
    tensor.scalar<int32_t>()() = value;
    tensor.AsProtoTensorContent((*node->mutable_attr())["value"].mutable_tensor());
  };
  auto set_type = [](NodeDef* node) { (*node->mutable_attr())["T"].set_type(tensorflow::DT_INT32); };
  int_const(p + "/zero", 0, {});
  int_const(p + "/iterations", static_cast<int32_t>(iterations_), {});
  counter_enter_ = p + "/counter/enter";
  AddEnter(counter_enter_, p + "/zero", tensorflow::DT_INT32, device_, false);
  AddEnter(p + "/iterations/enter", p + "/iterations", tensorflow::DT_INT32, device_, true);
  NodeDef* merge = AddNode(p + "/counter/merge", "Merge", device_, {counter_enter_, p + "/counter/next"});
  set_type(merge);
  (*merge->mutable_attr())["N"].set_i(2);
  set_type(AddNode(p + "/less", "Less", device_, {p + "/counter/merge", p + "/iterations/enter"}));
  loop_cond_ = p + "/loop_cond";
  AddNode(loop_cond_, "LoopCond", device_, {p + "/less"});
  set_type(AddNode(p + "/counter/switch", "Switch", device_, {p + "/counter/merge", loop_cond_}));
  pivot_ = p + "/pivot";
  set_type(AddNode(pivot_, "Identity", device_, {p + "/counter/switch:1"}));
  marker_ = p + "/iteration";
  AddNode(marker_, kLoopIterationOp, device_, {pivot_});
  int_const(p + "/one", 1, {ControlText(pivot_)});
  set_type(AddNode(p + "/counter/add", "AddV2", device_, {pivot_, p + "/one"}));
  counter_next_ = p + "/counter/next";
  set_type(AddNode(counter_next_, "NextIteration", device_, {p + "/counter/add"}));
  counter_exit_ = p + "/counter/exit";
  set_type(AddNode(counter_exit_, "Exit", device_, {p + "/counter/switch"}));
  return absl::OkStatus();
}

const std::string& LoopBuilder::EnterFor(int source, int port) {
  const NodeDef& node = graph_->node(source);
  const std::string key = TensorName(node.name(), port);
  auto it = enters_.find(key);
  if (it != enters_.end()) return it->second;
  std::string name = absl::StrCat(kPrefix, "/enter/", node.name(), port == 0 ? "" : absl::StrCat("_", port));
  AddEnter(name, key, output_types_[source][port], node.device().empty() ? device_ : node.device(), true);
  return enters_.emplace(key, name).first->second;
}

absl::Status LoopBuilder::RewireInsideNodes() {
  for (const std::string& name : fetch_nodes_) {
    if (inside_[IndexOf(name)]) renamed_[name] = absl::StrCat(kPrefix, "/body/", name);
  }
  for (int i = 0; i < original_size_; ++i) {
    if (!inside_[i]) continue;
    // Copy: EnterFor adds nodes, and adding may move the NodeDefs of the repeated field.
    NodeDef node = graph_->node(i);
    std::vector<std::string> inputs;
    bool has_inside_input = false;
    bool needs_pivot = false;
    for (const std::string& input : node.input()) {
      InputRef ref = RefOf(input);
      if (IsGuard(ref.node)) continue;
      int source = IndexOf(ref.node);
      if (inside_[source]) {
        has_inside_input = true;
        auto renamed = renamed_.find(ref.node);
        const std::string& name = renamed == renamed_.end() ? ref.node : renamed->second;
        inputs.push_back(ref.control ? ControlText(name) : TensorName(name, ref.port));
      } else if (ref.control) {
        entry_controls_.insert(ref.node);
        needs_pivot = true;
      } else {
        if (ref.port >= static_cast<int>(output_types_[source].size())) {
          return absl::InvalidArgumentError(
              absl::StrCat("input '", input, "' of '", node.name(), "' names a missing output"));
        }
        inputs.push_back(EnterFor(source, ref.port));
      }
    }
    if (needs_pivot || !has_inside_input) inputs.push_back(ControlText(marker_));
    node.clear_input();
    for (const std::string& input : inputs) node.add_input(input);
    auto renamed = renamed_.find(node.name());
    if (renamed != renamed_.end()) node.set_name(renamed->second);
    *graph_->mutable_node(i) = std::move(node);
  }
  for (NodeDef& node : *graph_->mutable_node()) {
    if (node.name() == counter_enter_) {
      for (const std::string& control : entry_controls_) node.add_input(ControlText(control));
    } else if (node.name() == counter_next_) {
      // The next step starts after the fetched ops of this one; this edge also keeps the loop body in the
      // fan-in of the fetches, which is all the session executes.
      for (const auto& renamed : renamed_) node.add_input(ControlText(renamed.second));
    }
  }
  return absl::OkStatus();
}

absl::Status LoopBuilder::CarryFetchesOut() {
  for (const std::string& name : fetch_nodes_) {
    int i = IndexOf(name);
    if (!inside_[i]) continue;
    const std::string body = renamed_.at(name);
    const std::string device = graph_->node(i).device();
    const tensorflow::DataTypeVector& types = output_types_[i];
    if (types.empty()) {
      NodeDef* outer = AddNode(name, "NoOp", device, {ControlText(counter_exit_)});
      (*outer->mutable_attr())[kLoopBuiltAttr].set_b(true);
      continue;
    }
    std::vector<std::string> exits;
    for (int k = 0; k < static_cast<int>(types.size()); ++k) {
      const DataType type = tensorflow::BaseType(types[k]);
      const std::string p = absl::StrCat(kPrefix, "/fetch/", name, "/", k);
      std::string value = TensorName(body, k);
      if (tensorflow::IsRefType(types[k])) {
        NodeDef* deref = AddNode(p + "/value", "Identity", device, {value});
        (*deref->mutable_attr())["T"].set_type(type);
        value = p + "/value";
      }
      TF_RETURN_IF_ERROR(AddZeroConst(p + "/initial", type, device));
      AddEnter(p + "/enter", p + "/initial", type, device, false);
      NodeDef* merge = AddNode(p + "/merge", "Merge", device, {p + "/enter", p + "/next"});
      (*merge->mutable_attr())["N"].set_i(2);
      for (NodeDef* node : {merge, AddNode(p + "/switch", "Switch", device, {p + "/merge", loop_cond_}),
                            AddNode(p + "/next", "NextIteration", device, {value}),
                            AddNode(p + "/exit", "Exit", device, {p + "/switch"})}) {
        (*node->mutable_attr())["T"].set_type(type);
      }
      exits.push_back(p + "/exit");
    }
    NodeDef* outer = AddNode(name, "IdentityN", device, {});
    auto* type_list = (*outer->mutable_attr())["T"].mutable_list();
    for (int k = 0; k < static_cast<int>(types.size()); ++k) {
      outer->add_input(exits[k]);
      type_list->add_type(tensorflow::BaseType(types[k]));
    }
    (*outer->mutable_attr())[kLoopBuiltAttr].set_b(true);
  }
  return absl::OkStatus();
}

void LoopBuilder::NumberSteps() {
  for (int i = 0; i < original_size_; ++i) {
    NodeDef* node = graph_->mutable_node(i);
    if (node->op() != "NpuDump" && node->op() != "NpuOverflowCheck") continue;
    auto& attrs = *node->mutable_attr();
    attrs[kStepsPerRunAttr].set_i(iterations_);
    attrs[kInLoopAttr].set_b(inside_[i]);
  }
}

void LoopBuilder::RemoveNodes() {
  GraphDef kept;
  for (int i = 0; i < graph_->node_size(); ++i) {
    if (i < original_size_ && remove_[i]) continue;
    kept.mutable_node()->Add()->Swap(graph_->mutable_node(i));
  }
  graph_->mutable_node()->Swap(kept.mutable_node());
}

absl::Status IterationsLoopPass::Run(const PassPlan& plan, const tensorflow::grappler::GrapplerItem& item,
                                     GraphDef* graph, bool* changed) {
  const int64_t iterations = plan.Get(contract::kIterationsPerLoop);
  GraphDef rewritten = *graph;
  LoopBuilder builder(item, &rewritten, iterations);
  if (!builder.FindIterationOps()) return absl::OkStatus();
  absl::Status status = iterations > 1 ? builder.Build()
                                       : absl::FailedPreconditionError(
                                             "this session's NpuOptimizer config does not set iterations_per_loop "
                                             "> 1; set it to the value the IterationOp was made for");
  if (status.ok()) {
    *graph = std::move(rewritten);
    *changed = true;
    return absl::OkStatus();
  }
  LoopBuilder reporter(item, graph, iterations);
  reporter.FindIterationOps();
  *changed = reporter.ReportFailure(std::string(status.message())) || *changed;
  return absl::OkStatus();
}

}  // namespace

REGISTER_NPU_REWRITE_PASS(900, IterationsLoopPass);

}  // namespace npu_bridge
