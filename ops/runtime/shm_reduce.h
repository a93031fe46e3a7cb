// Element-wise reductions of the shared-memory collectives (sum, prod, max, min) for the dtypes they carry.
#ifndef NPU_BRIDGE_OPS_RUNTIME_SHM_REDUCE_H_
#define NPU_BRIDGE_OPS_RUNTIME_SHM_REDUCE_H_

#include <cstddef>

#include "absl/status/status.h"
#include "tensorflow/core/framework/types.pb.h"

namespace npu_bridge {
namespace shm {

enum Reduction { kSum = 0, kProd = 1, kMax = 2, kMin = 3 };

// Parses "sum", "prod", "max" or "min".
absl::Status ParseReduction(const std::string& name, Reduction* reduction);

// Whether Reduce supports `dtype`.
bool IsReducible(tensorflow::DataType dtype);

// out = sources[0] op sources[1] op ... op sources[n - 1], `bytes` bytes each, in source order (the same bits on
// every rank). `out` must not overlap a source.
void Reduce(tensorflow::DataType dtype, Reduction reduction, const char* const* sources, int n, char* out,
            size_t bytes);

}  // namespace shm
}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_SHM_REDUCE_H_
