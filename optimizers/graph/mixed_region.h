// The reduced-precision region of a mixed precision mode (Ascend's white / black / gray lists, as the
// session's pass plan names them): which computing nodes compute in fp16 / bf16.
#ifndef NPU_BRIDGE_OPTIMIZERS_GRAPH_MIXED_REGION_H_
#define NPU_BRIDGE_OPTIMIZERS_GRAPH_MIXED_REGION_H_

#include <functional>
#include <set>
#include <string>

#include "optimizers/graph/graph_edit.h"
#include "tensorflow/core/framework/node_def.pb.h"

namespace npu_bridge {

struct MixedLists {
  std::set<std::string> white;  // op types that compute in reduced precision
  std::set<std::string> black;  // op types that keep float32; every other op is gray
};

// Returns the names of the nodes in the region: computing nodes on float32 values that are white-listed, and
// gray ones whose deciding input comes from the region, also through ops that only move values (Identity, Enter,
// Switch, Merge, ... and rounding casts), so the region follows while loops and conds. A gray node's deciding
// input is its first float32 input, inputs holding a constant or a variable's value counted last (Ascend's
// fusion engine types a gray op after that input: `beta2 * v + (1 - beta2) * g * g` stays float32 when `g` is
// fp16, because its first input `beta2 * v` is). Black-listed nodes and nodes for which `excluded` is true are
// never in it, and do not pass it on.
std::set<std::string> MixedRegion(const GraphEditor& editor, const MixedLists& lists,
                                  const std::function<bool(const tensorflow::NodeDef&)>& excluded);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_GRAPH_MIXED_REGION_H_
