// Small GraphDef editing helpers for rewrite passes: find nodes by name, list the consumers of a tensor,
// rewire inputs and add nodes. Node pointers stay valid while nodes are added (protobuf repeated fields keep
// their elements in place); the consumer index is kept current by Rewire() and AddNode().
#ifndef NPU_BRIDGE_OPTIMIZERS_GRAPH_EDIT_H_
#define NPU_BRIDGE_OPTIMIZERS_GRAPH_EDIT_H_

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "optimizers/graph/graph_util.h"
#include "tensorflow/core/framework/graph.pb.h"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {

// The type attribute `attr` of a node; DT_INVALID when it has none.
tensorflow::DataType TypeAttr(const tensorflow::NodeDef& node, const std::string& attr);

class GraphEditor {
 public:
  explicit GraphEditor(tensorflow::GraphDef* graph);

  tensorflow::NodeDef* Find(const std::string& name) const;
  // `base`, or `base_1`, `base_2`, ... : the first name no node has.
  std::string UniqueName(const std::string& base) const;
  // Adds a node (the name must be new) with the given op and device.
  tensorflow::NodeDef* AddNode(const std::string& name, const std::string& op, const std::string& device);
  // Data consumers of `tensor` (canonical name): (node, input position).
  std::vector<std::pair<tensorflow::NodeDef*, int>> Consumers(const std::string& tensor) const;
  // Makes input `position` of `node` read `tensor`.
  void Rewire(tensorflow::NodeDef* node, int position, const std::string& tensor);
  // Renames a node and every reference to it (data and control inputs).
  void Rename(tensorflow::NodeDef* node, const std::string& new_name);
  // Makes the consumers of `tensor`, except node `except`, read `replacement` instead.
  void RedirectConsumers(const std::string& tensor, const std::string& replacement, const std::string& except);
  // A fetch names a node, so redirecting consumers does not change what a fetched node gives: this renames
  // `node` to "<name>/npu_original" and adds an IdentityN with its name whose outputs are `replacements[i]`
  // for the redirected outputs and the node's own outputs otherwise.
  void ReplaceFetchedOutputs(tensorflow::NodeDef* node, const tensorflow::DataTypeVector& out_types,
                             const std::map<int, std::string>& replacements);
  // Appends a data input (before any control inputs are added) and indexes it.
  void AddInput(tensorflow::NodeDef* node, const std::string& tensor);
  // Adds a Cast node from `input` (of type `from`) to `to`; returns its name.
  std::string AddCast(const std::string& name, const std::string& input, tensorflow::DataType from,
                      tensorflow::DataType to, const std::string& device);
  // The node names present when the editor was made, in graph order.
  const std::vector<std::string>& original_nodes() const { return original_; }

 private:
  void Index(tensorflow::NodeDef* node);

  tensorflow::GraphDef* graph_;
  std::unordered_map<std::string, tensorflow::NodeDef*> nodes_;
  std::unordered_map<std::string, std::vector<std::pair<tensorflow::NodeDef*, int>>> consumers_;
  std::vector<std::string> original_;
};

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_GRAPH_EDIT_H_
