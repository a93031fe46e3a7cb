// What the instrumenting rewrite passes (overflow checks, dump, exception capture) share: which ops they watch
// (Watches: one predicate, their differences stated there), the names and ids an instrumented op and their nodes
// carry, and how their nodes are attached to a watched op (FollowOps: one way of rewiring for the three).
//
// Attaching. TensorFlow prunes the optimized graph to what the fetches need, so a node that only observes an op
// would be dropped when nothing reads it -- also when the run fetches the op itself, as a fetch names a node, not
// its readers. FollowOps makes the op's readers read the values its observers forward (or wait for them) and
// replaces an op the run fetches by name with a forwarder that does the same.
//
// Naming. TensorFlow gives all stateful nodes of one name in the graphs of a session one kernel, made for the
// first graph that ran one (DirectSession's OpSegment), and the instrumentation kernels keep that graph's settings
// (its model and step count, task ids, the iterations loop, the outputs). So the nodes the passes add carry the
// graph's model id in their names (NameInModel), and an op the passes rename (to give its name to a forwarder) is
// renamed in every graph that has it when its own kernel is shared, so that it keeps one kernel (and one random
// state, ...) as without instrumentation. A renamed op keeps its original name in the attribute kOriginalNameAttr,
// which artifacts use.
#ifndef NPU_BRIDGE_OPTIMIZERS_INSTRUMENTATION_H_
#define NPU_BRIDGE_OPTIMIZERS_INSTRUMENTATION_H_

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "optimizers/graph/graph_util.h"
#include "optimizers/graph/op_classes.h"
#include "optimizers/pass_plan.h"
#include "tensorflow/core/framework/graph.pb.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/grappler/grappler_item.h"

namespace npu_bridge {

// Attributes stamped on instrumented ops.
constexpr char kTaskIdAttr[] = "_npu_task_id";  // its task id in every artifact

// True for the graph a run executes: the graph a session runs, and for a plan of TF2 function graphs
// (`function_graphs`) a function body too. A session's function bodies, which Grappler optimizes separately, are
// left to the graph that calls them.
bool IsMainGraph(const tensorflow::grappler::GrapplerItem& item, bool function_graphs);

// True when TensorFlow runs the item as a function body, where every stateful node runs whether or not anything
// reads it (a session runs only what its fetches need): a graph with function arguments or results, and every
// graph of a plan of TF2 function graphs.
bool IsFunctionBody(const tensorflow::grappler::GrapplerItem& item, bool function_graphs);

// The op's task id: the one stamped earlier by another pass, or a new process-wide id stamped now.
int64_t TaskIdOf(tensorflow::NodeDef* node);

// The model an instrumented graph is dumped as: {root}/{model_name}/{model_id} (ModelDumpDir,
// ops/runtime/dump_layout.h). Every pass finds the same model on the same graph (the id is read back from nodes
// instrumented earlier); every graph a session runs gets a model id of its own. With an empty root (no dump: the
// exception capture) the dir is empty.
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

// The instrumentations and which ops they watch. ONE predicate decides for all three, Watches(): every
// instrumentation watches the ops Ascend runs as tasks of their own, which are
//  * ops that compute from inputs (ComputesFromInputs, op_classes.h): not sources (no inputs), not ops that move,
//    hold or describe values (constants, placeholders, variables, identities, control-flow plumbing, shapes), not
//    this project's instrumentation;
//  * that run: not fed ops (`fed`, FedNodes: a fed op's value comes from the feed);
//  * whose types the op registry knows (not a direct call of a library function by its name);
//  * of which a composed op's call (IsComposedOp) is one, of its Ascend type.
// The differences, each covered by tests/dump/test_instrumented_ops.py:
//  * Other structural ops (IsStructuralOp: functional While / If / Case, function calls that are not composed
//    ops; NoOp and LoopCond have no floating-point outputs): only the overflow check watches them. Their bodies
//    are function bodies, which no instrumentation rewrites, so checking their floating-point outputs is how an
//    overflow inside one still reaches the float-status register and the overflow records (as the call). There
//    is no such Ascend op to dump or to capture.
//  * The float-status register's own ops (IsFloatStatusOp): the overflow check does not watch them -- their
//    outputs are the register's flags, not values an op computed -- while the dump and the exception capture
//    watch them like any op.
// What each then takes from a watched op is its own business: the overflow check its floating-point outputs, the
// dump its outputs and/or inputs (dump_mode; dump_layer narrows the ops), the capture its data inputs (an op
// without any has nothing to hold).
enum class Watcher { kOverflowCheck, kDump, kExceptionCapture };
bool Watches(Watcher watcher, const tensorflow::NodeDef& node, const std::set<std::string>& fed);

// The ops that read, clear or allocate the emulated float-status register (NpuGetFloatStatus & co).
bool IsFloatStatusOp(const std::string& op);

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

// A fresh name (NameSet::Fresh) for a node a pass adds to the graph of `model`: "{base}_m{model id}", so that no
// two graphs of a session share its kernel (see Naming above); `base` itself for model id 0 (no model: the
// float-status register's checks alone, whose kernels hold nothing of their graph).
std::string NameInModel(const std::string& base, const DumpModel& model, NameSet* names);

// Following: what the observers of one op need from the op's readers.
struct Followers {
  std::map<int, std::string> replacements;  // output index -> the tensor its data readers read instead
  std::vector<std::string> waits;           // nodes that whatever reads, waits for or fetches the op waits for
};
// Attaches the observers of each op in `followers` (op name -> its followers) to `graph`:
//  * a data reader of op:i reads replacements[i] where given (a node that forwards the value);
//  * every node that reads the op or waits for it also waits for its `waits`, and a node that waits for it
//    (control) also for the nodes of its replacements;
//  * with `forward_fetches`, an op the run fetches (`fetched`: FetchedNodes, tensors and targets) runs as a fresh
//    "{name}/{suffix}" -- every reference, the observers' too, follows the rename -- and a forwarder takes its name:
//    an IdentityN over the op's outputs (replacements[i] where given) that also waits for `waits` (a NoOp after
//    the op for an op without outputs). So is an op whose kernel TensorFlow shares between graphs (a stateful op:
//    random ops, ...), fetched or not, so that it runs under the same name in every graph (see Naming above);
//    its forwarder is pruned where nothing fetches it.
// The observers' own nodes (the replacements' nodes and `waits`) are not rewired otherwise. Returns the renamed
// ops, op name -> the name it runs under.
std::map<std::string, std::string> FollowOps(tensorflow::GraphDef* graph,
                                             const std::map<std::string, Followers>& followers, bool forward_fetches,
                                             const std::set<std::string>& fetched, const std::string& suffix,
                                             NameSet* names);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_INSTRUMENTATION_H_
