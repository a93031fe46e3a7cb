// Where dump artifacts go. Python makes the root, {dump_path}/{time}/{device id} (npu_bridge/core/dump/dump_root.py:
// it creates the {time} directory, with another name when that one is taken), and hands it to the passes whole;
// below it every path is composed here and nowhere else:
//   {root}/{model name}/{model id}/{step}/{file}
// The passes put the model directory on the instrumentation nodes (dump_dir); their kernels add the step, the
// dump writer the file. Python only reads these levels back (npu_bridge/core/dump/dump_tree.py, dump_names.py, and
// the model of an overflow record in dump_reports.py), so it has nothing here to compose.
#ifndef NPU_BRIDGE_OPS_RUNTIME_DUMP_LAYOUT_H_
#define NPU_BRIDGE_OPS_RUNTIME_DUMP_LAYOUT_H_

#include <cstdint>
#include <string>

namespace npu_bridge {

// The statistics of a step directory (dump_data=stats), appended by every record of the step.
constexpr char kStatisticsFile[] = "statistic.csv";
// Its record of file names too long for the file system ("{digits},{original name}").
constexpr char kMappingFile[] = "mapping.csv";

// {root}/{model name}/{model id}. Ascend names a model after its graph; ours are named like GE's default graphs,
// ge_default_{local time now}_{model id}.
std::string ModelDumpDir(const std::string& root, int64_t model_id);
// {model_dir}/{step}.
std::string StepDumpDir(const std::string& model_dir, int64_t step);
// {dir}/{file_name}.
std::string DumpFilePath(const std::string& dir, const std::string& file_name);

// File names (npu_bridge/core/dump/dump_names.py reads them). Op types and names are sanitized (SanitizeName).
// The dump file: {op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}.
std::string DumpFileName(const std::string& op_type, const std::string& op_name, int64_t task_id, int64_t stream_id,
                         uint64_t timestamp);
// A golden tensor (without ".npy"): {op_name}.{output_index}.{timestamp}.
std::string GoldenFileStem(const std::string& op_name, int64_t output_index, uint64_t timestamp);
// An overflow record: Opdebug.Node_OpDebug.{task_id}.{stream_id}.{timestamp}.
std::string OpdebugFileName(int64_t task_id, int64_t stream_id, uint64_t timestamp);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_DUMP_LAYOUT_H_
