#include "optimizers/graph/status_order.h"

#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "optimizers/graph/graph_util.h"
#include "optimizers/graph/op_classes.h"

namespace npu_bridge {
namespace {

using Adjacency = std::vector<std::vector<int>>;

bool ReadsFloatStatus(const std::string& op) { return op == "NpuGetFloatStatus" || op == "NpuGetFloatStatusV2"; }

// The nodes reachable from `start` along `next` (start included).
std::vector<bool> Reachable(int start, const Adjacency& next) {
  std::vector<bool> seen(next.size(), false);
  std::vector<int> pending{start};
  seen[start] = true;
  while (!pending.empty()) {
    const int i = pending.back();
    pending.pop_back();
    for (int j : next[i]) {
      if (!seen[j]) {
        seen[j] = true;
        pending.push_back(j);
      }
    }
  }
  return seen;
}

// Each node's while-loop frame, as the path of frame names from the root ("" for the root frame): an Enter opens
// its frame_name below its input's frame, an Exit returns to the parent, any other node is in the frame of its
// inputs (TensorFlow requires all of them, control inputs included, to share one). Unreached nodes: nullopt.
std::vector<std::optional<std::string>> Frames(const tensorflow::GraphDef& graph, const Adjacency& inputs,
                                               const Adjacency& readers) {
  std::vector<std::optional<std::string>> frame(graph.node_size());
  std::deque<int> pending;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (inputs[i].empty()) {
      frame[i] = "";
      pending.push_back(i);
    }
  }
  while (!pending.empty()) {
    const int i = pending.front();
    pending.pop_front();
    for (int j : readers[i]) {
      if (frame[j]) continue;
      const tensorflow::NodeDef& node = graph.node(j);
      if (node.op() == "Enter" || node.op() == "RefEnter") {
        auto name = node.attr().find("frame_name");
        frame[j] = *frame[i] + "/" + (name == node.attr().end() ? std::string() : name->second.s());
      } else if (node.op() == "Exit" || node.op() == "RefExit") {
        const size_t slash = frame[i]->rfind('/');
        frame[j] = slash == std::string::npos ? std::string() : frame[i]->substr(0, slash);
      } else {
        frame[j] = frame[i];
      }
      pending.push_back(j);
    }
  }
  return frame;
}

}  // namespace

bool SetsFloatStatus(const tensorflow::NodeDef& node) {
  if (node.op() == "NpuOverflowCheck" || node.op() == "NpuSaturateFp16") return true;
  if (node.op() != kRoundOp) return false;
  auto saturate = node.attr().find("saturate");
  return saturate != node.attr().end() && saturate->second.b();
}

bool OrderStatusReads(bool function_body, tensorflow::GraphDef* graph) {
  const int count = graph->node_size();
  std::vector<int> reads, setters;
  for (int i = 0; i < count; ++i) {
    if (ReadsFloatStatus(graph->node(i).op())) reads.push_back(i);
    if (SetsFloatStatus(graph->node(i))) setters.push_back(i);
  }
  if (reads.empty() || setters.empty()) return false;
  std::unordered_map<std::string, int> index_of;
  for (int i = 0; i < count; ++i) index_of[graph->node(i).name()] = i;
  Adjacency inputs(count), readers(count);
  for (int i = 0; i < count; ++i) {
    for (const std::string& input : graph->node(i).input()) {
      auto it = index_of.find(ParseInput(input).first);
      if (it == index_of.end()) continue;
      inputs[i].push_back(it->second);
      readers[it->second].push_back(i);
    }
  }
  const std::vector<std::optional<std::string>> frame = Frames(*graph, inputs, readers);
  // A setter nobody reads runs only when fetched (the session prunes the rest), unless a read is ordered after it.
  std::vector<bool> runs(count, function_body);
  for (int setter : setters) runs[setter] = runs[setter] || !readers[setter].empty();
  bool added = false;
  for (int read : reads) {
    if (!frame[read]) continue;
    // Recomputed per read: the edges added for an earlier read are part of the order now, so no cycle can form.
    const std::vector<bool> before = Reachable(read, inputs);
    const std::vector<bool> after = Reachable(read, readers);
    for (int setter : setters) {
      if (before[setter] || after[setter] || frame[setter] != frame[read]) continue;
      // The check of a value the read waits for (a fetched value, only a control input of the read) belongs
      // before the read even though nothing reads the check: the edge makes it run.
      const bool checks_a_value_before = !inputs[setter].empty() && before[inputs[setter][0]];
      if (!runs[setter] && !checks_a_value_before) continue;
      graph->mutable_node(read)->add_input("^" + graph->node(setter).name());
      inputs[read].push_back(setter);
      readers[setter].push_back(read);
      added = true;
    }
  }
  return added;
}

}  // namespace npu_bridge
