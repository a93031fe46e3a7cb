#include "optimizers/graph/graph_util.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "tensorflow/core/framework/node_def_util.h"
#include "tensorflow/core/framework/op.h"

namespace npu_bridge {

std::string TensorName(const std::string& node, int index) {
  return index == 0 ? node : node + ":" + std::to_string(index);
}

std::pair<std::string, int> ParseInput(const std::string& input) {
  if (!input.empty() && input[0] == '^') return {input.substr(1), -1};
  const size_t colon = input.rfind(':');
  int port = 0;
  // absl::SimpleAtoi never throws: a port that is not a small decimal number leaves the name whole.
  if (colon != std::string::npos && colon + 1 < input.size() &&
      std::all_of(input.begin() + colon + 1, input.end(), ::isdigit) &&
      absl::SimpleAtoi(input.substr(colon + 1), &port)) {
    return {input.substr(0, colon), port};
  }
  return {input, 0};
}

std::set<std::string> FetchedNodes(const tensorflow::grappler::GrapplerItem& item) {
  std::set<std::string> nodes;
  for (const std::string& fetch : item.fetch) nodes.insert(ParseInput(fetch).first);
  return nodes;
}

std::set<std::string> FedNodes(const tensorflow::grappler::GrapplerItem& item) {
  std::set<std::string> nodes;
  for (const auto& feed : item.feed) nodes.insert(ParseInput(feed.first).first);
  return nodes;
}

bool NodeTypes(const tensorflow::NodeDef& node, tensorflow::DataTypeVector* inputs,
               tensorflow::DataTypeVector* outputs) {
  const tensorflow::OpDef* op_def = nullptr;
  if (!tensorflow::OpRegistry::Global()->LookUpOpDef(node.op(), &op_def).ok()) return false;
  return tensorflow::InOutTypesForNode(node, *op_def, inputs, outputs).ok();
}

std::string OriginalName(const tensorflow::NodeDef& node) {
  auto it = node.attr().find(kOriginalNameAttr);
  return it == node.attr().end() ? node.name() : it->second.s();
}

void RememberOriginalName(tensorflow::NodeDef* node) {
  auto* attrs = node->mutable_attr();
  if (!attrs->count(kOriginalNameAttr)) (*attrs)[kOriginalNameAttr].set_s(node->name());
}

std::vector<std::string> DataInputs(const tensorflow::NodeDef& node) {
  std::vector<std::string> inputs;
  for (const std::string& input : node.input()) {
    if (!input.empty() && input[0] != '^') inputs.push_back(input);
  }
  return inputs;
}

}  // namespace npu_bridge
