// What the instrumenting rewrite passes (overflow checks, dump, exception capture) share: which ops compute,
// the names and ids an instrumented op carries in its artifacts, and how an op is replaced by a node that
// forwards its outputs.
//
// Replacing by name. TensorFlow prunes the optimized graph to what the fetches need, so a node that only
// observes an op would be dropped when nothing reads it. Instead the op is renamed ("X" becomes
// "X/npu_dump_source") and the observer takes its name and forwards its outputs: every reference to "X" --
// data, control, fetch, target -- now goes through the observer. The renamed op keeps its original name in
// the attribute kOriginalNameAttr, which artifacts use.
#ifndef NPU_BRIDGE_OPTIMIZERS_INSTRUMENTATION_H_
#define NPU_BRIDGE_OPTIMIZERS_INSTRUMENTATION_H_

#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "optimizers/graph/graph_util.h"
#include "optimizers/graph/op_classes.h"
#include "optimizers/pass_options.h"
#include "tensorflow/core/framework/graph.pb.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/grappler/grappler_item.h"

namespace npu_bridge {

// Attributes stamped on instrumented ops.
constexpr char kTaskIdAttr[] = "_npu_task_id";  // its task id in every artifact

// True for the graph a session runs; false for function bodies, which Grappler optimizes separately.
bool IsMainGraph(const tensorflow::grappler::GrapplerItem& item);

// The op's task id: the one stamped earlier by another pass, or a new process-wide id stamped now.
int64_t TaskIdOf(tensorflow::NodeDef* node);

// The model an instrumented graph is dumped as: {root}/{model_name}/{model_id}. Every pass finds the same
// model on the same graph (the id is read back from nodes instrumented earlier).
struct DumpModel {
  int64_t id = 0;
  std::string dir;
};
DumpModel FindOrCreateModel(const tensorflow::GraphDef& graph, const std::string& root);

// `device` with its type changed to CPU (job, replica and task kept): the instrumentation kernels are
// CPU kernels. "" stays "".
std::string CpuDevice(const std::string& device);

// True when `tensor` ("node" or "node:i") may share the buffer of a TF1 reference variable: a reference
// output, reached directly or through ops that forward their input buffer (Identity, Reshape, ...). Such a
// tensor can change in place after it was read, so the dump copies it. `index_of` maps node names to
// indices in `graph`.
bool AliasesVariable(const tensorflow::GraphDef& graph, const std::map<std::string, int>& index_of,
                     const std::string& tensor);
// True for ops whose output 0 may be their input 0's buffer.
bool ForwardsInput(const std::string& op);

// Composed ops: function calls that compute one Ascend op (DynamicRNN's time loop, ...), stamped with
// kComposedOpAttr by the Python layer (npu_bridge/core/compute/composite.py). Artifacts show such a call as
// one op of that type with its first kComposedOutputsAttr outputs, and its body not at all.
// StampComposedGradients gives the backward call TensorFlow builds for a stamped call X (named
// ".../X_grad/PartitionedCall") the type "{type}Grad"; every instrumenting pass calls it first (idempotent).
void StampComposedGradients(tensorflow::GraphDef* graph);
// The Ascend op type artifacts give a node: the composed type, else its TensorFlow op type.
std::string ArtifactOpType(const tensorflow::NodeDef& node);
// True for a stamped call; how many of its outputs artifacts show (all for other nodes).
bool IsComposedOp(const tensorflow::NodeDef& node);
int ArtifactOutputCount(const tensorflow::NodeDef& node, int outputs);

// Float32 tensors that hold float16 / bfloat16 values as far as artifacts are concerned, with that type. An
// NpuRound (the precision pass's rounding) is one of Ascend's precision casts: one that rounds an op's output
// (kRoundsOutputAttr) is the cast back to float32 after an op Ascend ran in reduced precision, whose output is
// listed; the others are casts to the reduced type, whose output is listed. Keys are canonical tensor names.
std::map<std::string, tensorflow::DataType> LowPrecisionTensors(const tensorflow::GraphDef& graph);

// Names already used in a graph, and fresh ones.
class NameSet {
 public:
  explicit NameSet(const tensorflow::GraphDef& graph);
  std::string Fresh(const std::string& base);  // base, or base_1, base_2, ... ; reserved
  bool Contains(const std::string& name) const { return names_.count(name) > 0; }

 private:
  std::set<std::string> names_;
};

// Renames graph->node(index) to a fresh "{name}/{suffix}", stamps kOriginalNameAttr, and returns the new
// name; the caller adds the forwarding node under the old name. Colocation groups ("loc:@name") of other
// nodes are redirected by RedirectColocation once all renames are done.
std::string RenameForForwarding(tensorflow::GraphDef* graph, int index, const std::string& suffix, NameSet* names);
void RedirectColocation(tensorflow::GraphDef* graph, const std::map<std::string, std::string>& renamed);

// For every {node: dependency} entry, appends "^dependency" to each node that reads `node` (data or
// control), so that what follows the node also waits for the dependency.
void AddControlToReaders(tensorflow::GraphDef* graph, const std::map<std::string, std::string>& dependency_of);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_INSTRUMENTATION_H_
