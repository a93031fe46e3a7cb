#include "ops/runtime/dump_layout.h"

#include <ctime>

#include "ops/runtime/dump_format.h"

namespace npu_bridge {

std::string ModelDumpDir(const std::string& root, int64_t model_id) {
  char time_text[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(time_text, sizeof(time_text), "%Y%m%d%H%M%S", std::localtime(&now));
  const std::string id = std::to_string(model_id);
  return root + "/ge_default_" + time_text + "_" + id + "/" + id;
}

std::string StepDumpDir(const std::string& model_dir, int64_t step) { return model_dir + "/" + std::to_string(step); }

std::string DumpFilePath(const std::string& dir, const std::string& file_name) { return dir + "/" + file_name; }

std::string DumpFileName(const std::string& op_type, const std::string& op_name, int64_t task_id, int64_t stream_id,
                         uint64_t timestamp) {
  return SanitizeName(op_type) + "." + SanitizeName(op_name) + "." + std::to_string(task_id) + "." +
         std::to_string(stream_id) + "." + std::to_string(timestamp);
}

std::string GoldenFileStem(const std::string& op_name, int64_t output_index, uint64_t timestamp) {
  return SanitizeName(op_name) + "." + std::to_string(output_index) + "." + std::to_string(timestamp);
}

std::string OpdebugFileName(int64_t task_id, int64_t stream_id, uint64_t timestamp) {
  return "Opdebug.Node_OpDebug." + std::to_string(task_id) + "." + std::to_string(stream_id) + "." +
         std::to_string(timestamp);
}

}  // namespace npu_bridge
