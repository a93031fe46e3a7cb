// Real reduced precision for a mixed region (the gpu backend): the region's ops are retyped to fp16 / bf16
// and casts are added where a retyped op meets a float32 one.
#ifndef NPU_BRIDGE_OPTIMIZERS_GRAPH_MIXED_CONVERT_H_
#define NPU_BRIDGE_OPTIMIZERS_GRAPH_MIXED_CONVERT_H_

#include <set>
#include <string>

#include "optimizers/graph/graph_edit.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {

// Retypes the float32 type attributes of the `region` nodes to `lowp`, except fetched nodes (a fetch keeps
// its dtype), ops with a fixed float32 argument or a list of types, and ops with no `lowp` kernel on their
// device (GPU when unplaced); adds one Cast per tensor that crosses the region's border. Returns true when it
// changed the graph.
bool ConvertRegion(GraphEditor* editor, const std::set<std::string>& region, const std::set<std::string>& fetched,
                   tensorflow::DataType lowp);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_GRAPH_MIXED_CONVERT_H_
