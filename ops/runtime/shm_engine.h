// The same-host collective engine: one Communicator per group in each process, with one progress thread that
// runs the group's collectives through the job's shared-memory segment (ops/runtime/shm_segment.h).
//
// Order: the group's leader (group rank 0) runs its collectives in the order they reach it and publishes each
// one's instance key and description; every other member runs the collective with that key next, and fails
// with "Shape mismatch" when its own differs. So ranks agree on the order without TensorFlow's keys matching.
// Data moves in rounds of at most one chunk per member through double buffers: copy in, post, wait for the
// peers, reduce or copy out, post. Waits spin briefly, then sleep on a futex. Any failure (timeout, a peer
// process that ended, a cancelled step, a mismatch) aborts the segment, and every rank's collectives then fail
// with its message, as TensorFlow's collectives fail for good after one failure.
#ifndef NPU_BRIDGE_OPS_RUNTIME_SHM_ENGINE_H_
#define NPU_BRIDGE_OPS_RUNTIME_SHM_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ops/runtime/shm_reduce.h"
#include "tensorflow/core/framework/types.pb.h"

namespace npu_bridge {
namespace shm {

enum Kind { kAllReduce = 1, kAllGather = 2, kBroadcast = 3, kReduceScatter = 4, kAllToAll = 5 };

// Who takes part: the group's members in group-rank order.
struct GroupSpec {
  uint64_t group_key = 0;
  std::vector<int> slots;        // each member's slot in the segment (its place among this host's ranks)
  std::vector<int> world_ranks;  // each member's world rank, for messages
  int group_rank = 0;            // this process's place among the members
  int local_size = 0;            // ranks on this host (slots of the segment)
};

// One collective of this process.
struct Work {
  Kind kind = kAllReduce;
  tensorflow::DataType dtype = tensorflow::DT_FLOAT;
  Reduction reduction = kSum;
  int root = 0;  // group rank of a broadcast's sender
  int64_t instance_key = 0;
  const char* input = nullptr;  // null on a broadcast's receivers
  size_t bytes = 0;             // each member's input (a broadcast: the tensor's bytes)
  char* output = nullptr;       // bytes; bytes * members for an allgather, bytes / members for a reduce-scatter
  double timeout_seconds = 0;   // 0: no bound of its own
  std::function<void(const absl::Status&)> done;
};

class Communicator {
 public:
  // The communicator of `spec`'s group in this process (made on first use).
  static absl::Status Get(const GroupSpec& spec, Communicator** communicator);

  // Hands `work` to the progress thread; `work.done` runs there (or here, when the group already failed).
  void Enqueue(Work work);
  // Ends the current and queued collectives of the group (a cancelled step): aborts the segment.
  void Cancel();

  // Implementation in shm_engine.cc.
  class Impl;

 private:
  explicit Communicator(Impl* impl) : impl_(impl) {}
  Impl* impl_;
};

}  // namespace shm
}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_SHM_ENGINE_H_
