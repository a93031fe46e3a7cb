// Counters that show the NpuOptimizer Grappler pass really ran, read from Python (npu_bridge.diagnostics).
#ifndef NPU_BRIDGE_OPTIMIZERS_PASS_STATS_H_
#define NPU_BRIDGE_OPTIMIZERS_PASS_STATS_H_

#include <string>
#include <vector>

namespace npu_bridge {

void RecordInit(const std::vector<std::string>& option_keys);
// `passes_run` names the rewrite passes that were enabled for this graph.
void RecordOptimize(int node_count, const std::vector<std::string>& passes_run);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_PASS_STATS_H_
