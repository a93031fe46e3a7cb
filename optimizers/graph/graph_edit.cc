#include "optimizers/graph/graph_edit.h"

#include <algorithm>

#include "tensorflow/core/framework/node_def_util.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_def.pb.h"

namespace npu_bridge {

tensorflow::DataType TypeAttr(const tensorflow::NodeDef& node, const std::string& attr) {
  auto it = node.attr().find(attr);
  return it == node.attr().end() ? tensorflow::DT_INVALID : it->second.type();
}

GraphEditor::GraphEditor(tensorflow::GraphDef* graph) : graph_(graph) {
  for (auto& node : *graph_->mutable_node()) {
    nodes_[node.name()] = &node;
    original_.push_back(node.name());
  }
  for (auto& node : *graph_->mutable_node()) Index(&node);
}

void GraphEditor::Index(tensorflow::NodeDef* node) {
  for (int i = 0; i < node->input_size(); ++i) {
    auto parsed = ParseInput(node->input(i));
    if (parsed.second >= 0) consumers_[TensorName(parsed.first, parsed.second)].push_back({node, i});
  }
}

tensorflow::NodeDef* GraphEditor::Find(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second;
}

std::string GraphEditor::UniqueName(const std::string& base) const {
  std::string name = base;
  for (int i = 1; nodes_.count(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

tensorflow::NodeDef* GraphEditor::AddNode(const std::string& name, const std::string& op, const std::string& device) {
  tensorflow::NodeDef* node = graph_->add_node();
  node->set_name(name);
  node->set_op(op);
  node->set_device(device);
  nodes_[name] = node;
  return node;
}

std::vector<std::pair<tensorflow::NodeDef*, int>> GraphEditor::Consumers(const std::string& tensor) const {
  auto it = consumers_.find(tensor);
  if (it == consumers_.end()) return {};
  return it->second;
}

void GraphEditor::Rewire(tensorflow::NodeDef* node, int position, const std::string& tensor) {
  auto old = ParseInput(node->input(position));
  if (old.second >= 0) {
    auto& list = consumers_[TensorName(old.first, old.second)];
    list.erase(std::remove(list.begin(), list.end(), std::make_pair(node, position)), list.end());
  }
  node->set_input(position, tensor);
  auto parsed = ParseInput(tensor);
  consumers_[TensorName(parsed.first, parsed.second)].push_back({node, position});
}

void GraphEditor::Rename(tensorflow::NodeDef* node, const std::string& new_name) {
  const std::string old_name = node->name();
  node->set_name(new_name);
  nodes_.erase(old_name);
  nodes_[new_name] = node;
  for (auto& other : *graph_->mutable_node()) {
    for (int i = 0; i < other.input_size(); ++i) {
      const auto parsed = ParseInput(other.input(i));
      if (parsed.first != old_name) continue;
      if (parsed.second < 0) {
        other.set_input(i, "^" + new_name);
      } else {
        Rewire(&other, i, TensorName(new_name, parsed.second));
      }
    }
  }
}

void GraphEditor::RedirectConsumers(const std::string& tensor, const std::string& replacement,
                                    const std::string& except) {
  for (auto& [consumer, position] : Consumers(tensor)) {
    if (consumer->name() != except) Rewire(consumer, position, replacement);
  }
}

void GraphEditor::ReplaceFetchedOutputs(tensorflow::NodeDef* node, const tensorflow::DataTypeVector& out_types,
                                        const std::map<int, std::string>& replacements) {
  const std::string name = node->name();
  const std::string renamed = name + "/npu_original";
  RememberOriginalName(node);
  Rename(node, renamed);
  tensorflow::NodeDef* outputs = AddNode(name, "IdentityN", node->device());
  auto* types = (*outputs->mutable_attr())["T"].mutable_list();
  for (int o = 0; o < static_cast<int>(out_types.size()); ++o) {
    auto it = replacements.find(o);
    AddInput(outputs, it != replacements.end() ? it->second : TensorName(renamed, o));
    types->add_type(out_types[o]);
  }
}

void GraphEditor::AddInput(tensorflow::NodeDef* node, const std::string& tensor) {
  node->add_input(tensor);
  auto parsed = ParseInput(tensor);
  if (parsed.second >= 0) {
    consumers_[TensorName(parsed.first, parsed.second)].push_back({node, node->input_size() - 1});
  }
}

std::string GraphEditor::AddCast(const std::string& name, const std::string& input, tensorflow::DataType from,
                                 tensorflow::DataType to, const std::string& device) {
  tensorflow::NodeDef* cast = AddNode(name, "Cast", device);
  AddInput(cast, input);
  (*cast->mutable_attr())["SrcT"].set_type(from);
  (*cast->mutable_attr())["DstT"].set_type(to);
  (*cast->mutable_attr())["Truncate"].set_b(false);
  return name;
}

}  // namespace npu_bridge
