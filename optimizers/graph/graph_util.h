// GraphDef naming and typing primitives every rewrite pass uses.
#ifndef NPU_BRIDGE_OPTIMIZERS_GRAPH_UTIL_H_
#define NPU_BRIDGE_OPTIMIZERS_GRAPH_UTIL_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tensorflow/core/framework/node_def.pb.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/grappler/grappler_item.h"

namespace npu_bridge {

// "node" for output 0, "node:i" otherwise: the canonical tensor name.
std::string TensorName(const std::string& node, int index);

// Splits a NodeDef input ("node", "node:i", "^node") into node name and output index (-1 for control).
std::pair<std::string, int> ParseInput(const std::string& input);

// Node names of a Grappler item's fetches and feeds (either may name tensors, "node:i").
std::set<std::string> FetchedNodes(const tensorflow::grappler::GrapplerItem& item);
std::set<std::string> FedNodes(const tensorflow::grappler::GrapplerItem& item);

// Input and output types of a node from its OpDef; false for unknown ops (function calls).
bool NodeTypes(const tensorflow::NodeDef& node, tensorflow::DataTypeVector* inputs,
               tensorflow::DataTypeVector* outputs);

// Attribute stamped on an op a pass renames (to give its name to a node that forwards its outputs): the
// name the user's graph gave it, which every artifact and report uses.
constexpr char kOriginalNameAttr[] = "_npu_original_name";

// The user's name of a node: kOriginalNameAttr when a pass renamed it, else its name.
std::string OriginalName(const tensorflow::NodeDef& node);

// Stamps kOriginalNameAttr with the node's current name unless an earlier rename stamped it; call it before
// renaming a node.
void RememberOriginalName(tensorflow::NodeDef* node);

// The data (non-control) inputs of a node.
std::vector<std::string> DataInputs(const tensorflow::NodeDef& node);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_GRAPH_UTIL_H_
