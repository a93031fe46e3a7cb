// The job's shared-memory segment, through which the ranks of one host exchange collective data.
//
// npu-run creates it as an anonymous memfd (nothing in /dev/shm, gone with the last process that maps it) and
// passes its descriptor to every rank it starts, named by NPU_BRIDGE_SHM_FD. All-zero is the valid initial
// state: the first rank to need the segment grows it to its size (every rank computes the same one), groups
// claim channels by compare-and-swap, and a rank writes its pid into its slot when it attaches.
#ifndef NPU_BRIDGE_OPS_RUNTIME_SHM_SEGMENT_H_
#define NPU_BRIDGE_OPS_RUNTIME_SHM_SEGMENT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace npu_bridge {
namespace shm {

constexpr int kMaxSlots = 64;      // ranks of one host that share a segment
constexpr int kMaxChannels = 128;  // groups and one-way send routes that can use the segment in one job
constexpr int kProposalRing = 16;  // operations the leader of a group may propose ahead
constexpr char kFdVariable[] = "NPU_BRIDGE_SHM_FD";
constexpr char kMemfdName[] = "npu_bridge-collectives";

// What the leader of a group proposes as the group's next operation; every member checks its own against it.
struct Proposal {
  uint64_t sequence;  // the operation's number in the channel (guards against a ring overrun)
  int64_t instance_key;
  int32_t kind;
  int32_t dtype;
  int64_t bytes;  // per member (the root's for a broadcast)
  int32_t reduction;
  int32_t root;
};

struct alignas(64) PostedLine {
  std::atomic<uint64_t> value;  // phases done: 3 per round of the channel (ops/runtime/shm_engine.cc Run)
};

struct alignas(64) Channel {
  std::atomic<uint64_t> group_key;  // 0: free
  std::atomic<uint64_t> members_hash;
  std::atomic<uint32_t> wake;  // futex word: bumped by every post
  std::atomic<uint32_t> sleepers;
  std::atomic<uint64_t> proposed;  // number of proposals published
  Proposal proposals[kProposalRing];
  PostedLine posted[kMaxSlots];
};

struct Header {
  std::atomic<uint32_t> aborted;  // 1 once abort_message is complete
  std::atomic<uint32_t> abort_claimed;
  char abort_message[1024];
  std::atomic<int32_t> pids[kMaxSlots];
  Channel channels[kMaxChannels];
};

// A mapping of the segment in this process (one per process, see Attach).
class Segment {
 public:
  // Maps the segment named by NPU_BRIDGE_SHM_FD, sized for `local_size` slots; the first call wins.
  static absl::Status Attach(int local_size, Segment** segment);

  Header* header() const { return header_; }
  int local_size() const { return local_size_; }
  size_t chunk_bytes() const { return chunk_bytes_; }
  // The double buffer `buffer` (0 or 1) of `slot` in `channel`.
  char* Buffer(int channel, int slot, int buffer) const;
  // Finds or claims the channel of a group; error when every channel is taken or the members differ.
  absl::Status ClaimChannel(uint64_t group_key, uint64_t members_hash, int* channel);

  // Makes every rank's waits end with `message` (the first abort wins); wakes every channel.
  void Abort(const std::string& message);
  bool Aborted() const { return header_->aborted.load(std::memory_order_acquire) != 0; }
  std::string AbortMessage() const;

 private:
  Segment(Header* header, int local_size, size_t chunk_bytes)
      : header_(header), local_size_(local_size), chunk_bytes_(chunk_bytes) {}

  Header* header_;
  int local_size_;
  size_t chunk_bytes_;
};

// Futex helpers on a shared (not process-private) word.
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeout_ns);
void FutexWakeAll(std::atomic<uint32_t>* word);

}  // namespace shm
}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_SHM_SEGMENT_H_
