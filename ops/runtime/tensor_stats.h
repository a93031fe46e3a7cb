// Per-tensor statistics for dump_data=stats (the rows of statistic.csv).
#ifndef NPU_BRIDGE_OPS_TENSOR_STATS_H_
#define NPU_BRIDGE_OPS_TENSOR_STATS_H_

#include <cstdint>
#include <string>

#include "tensorflow/core/framework/tensor.h"

namespace npu_bridge {

struct TensorStats {
  bool numeric = false;  // false for types without statistics (complex, strings, ...)
  int64_t count = 0;
  int64_t negative = 0, positive = 0, zero = 0;  // among finite values
  int64_t nan = 0, negative_inf = 0, positive_inf = 0;
  double max = 0, min = 0, mean = 0, l2norm = 0;  // over finite values; NaN when there are none
};

TensorStats ComputeStats(const tensorflow::Tensor& tensor);

// The statistic.csv header and the cells after "Shape" for one tensor.
extern const char kStatsCsvHeader[];
std::string StatsCsvCells(const TensorStats& stats, tensorflow::DataType dtype);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_TENSOR_STATS_H_
