// The same-host collective engine (see shm_engine.h): progress threads, ordering, rounds, waits and failures.
#include "ops/runtime/shm_engine.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/runtime/shm_segment.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {
namespace shm {

namespace {

constexpr double kSpinSeconds = 20e-6;  // then sleep: 8 ranks on 2 cores must not spin each other out
constexpr int64_t kSleepSliceNs = 20 * 1000 * 1000;
constexpr double kPeerCheckSeconds = 0.05;
constexpr uint64_t kPhases = 3;              // posts per round (see Run)
constexpr size_t kTwoShotBytes = 64 * 1024;  // from here on, members split each piece's reduction

// Tells the core this thread spins (lets a sibling hyper-thread run); a no-op where there is no such hint.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

uint64_t MembersHash(const GroupSpec& spec) {
  uint64_t hash = 1469598103934665603ull;
  for (int slot : spec.slots) hash = (hash ^ static_cast<uint64_t>(slot + 1)) * 1099511628211ull;
  return hash == 0 ? 1 : hash;
}

const char* KindName(int kind) {
  switch (kind) {
    case kAllReduce:
      return "allreduce";
    case kAllGather:
      return "allgather";
    case kBroadcast:
      return "broadcast";
    case kReduceScatter:
      return "reduce_scatter";
    case kAllToAll:
      return "all_to_all";
    default:
      return "collective";
  }
}

std::string Describe(const Proposal& p) {
  return absl::StrCat(KindName(p.kind), " of ", p.bytes, " bytes of ",
                      tensorflow::DataType_Name(static_cast<tensorflow::DataType>(p.dtype)), " (reduction ",
                      p.reduction, ", root ", p.root, ")");
}

Proposal ProposalOf(const Work& work, uint64_t sequence) {
  Proposal p;
  p.sequence = sequence;
  p.instance_key = work.instance_key;
  p.kind = work.kind;
  p.dtype = work.dtype;
  p.bytes = static_cast<int64_t>(work.bytes);
  p.reduction = work.kind == kAllReduce || work.kind == kReduceScatter ? work.reduction : 0;
  p.root = work.kind == kBroadcast ? work.root : 0;
  return p;
}

bool SameOperation(const Proposal& a, const Proposal& b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.bytes == b.bytes && a.reduction == b.reduction && a.root == b.root;
}

}  // namespace

class Communicator::Impl {
 public:
  Impl(const GroupSpec& spec, Segment* segment, int channel)
      : spec_(spec),
        segment_(segment),
        channel_(&segment->header()->channels[channel]),
        channel_index_(channel),
        pidfds_(spec.slots.size(), -1),
        pids_(spec.slots.size(), 0) {
    segment_->header()->pids[spec.slots[spec.group_rank]].store(static_cast<int32_t>(getpid()));
    // Operations and rounds continue where earlier users of the channel in this job left them.
    const uint64_t posted = channel_->posted[MySlot()].value.load(std::memory_order_acquire);
    round_ = posted / kPhases;
    sequence_ = 0;  // the channel of a group is only ever used by one communicator per process
    std::thread([this] { Loop(); }).detach();
  }

  void Enqueue(Work work) {
    absl::Status failure;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (failure_.ok()) {
        if (work.timeout_seconds > 0) work.timeout_seconds += Now();  // from here on: the deadline
        queue_.push_back(std::move(work));
        ready_.notify_all();
        return;
      }
      failure = failure_;
    }
    work.done(failure);
  }

  void Cancel() {
    cancelled_.store(true);
    std::lock_guard<std::mutex> lock(mutex_);
    ready_.notify_all();
  }

 private:
  int MySlot() const { return spec_.slots[spec_.group_rank]; }
  int Members() const { return static_cast<int>(spec_.slots.size()); }
  int MyWorldRank() const { return spec_.world_ranks[spec_.group_rank]; }

  void Loop() {
    for (;;) {
      Work work;
      absl::Status status = Next(&work);
      if (status.ok()) status = Run(work);
      if (!status.ok()) Fail(status);
      if (work.done) work.done(status);
    }
  }

  // Fails every queued collective of the group, and all later ones, with `status`.
  void Fail(const absl::Status& status) {
    std::deque<Work> failed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (failure_.ok()) failure_ = status;
      failed.swap(queue_);
    }
    for (Work& work : failed) work.done(status);
  }

  // The earliest deadline of the queued collectives, 0 when none has one. Needs mutex_.
  double QueuedDeadline() const {
    double deadline = 0;
    for (const Work& work : queue_) {
      if (work.timeout_seconds > 0 && (deadline == 0 || work.timeout_seconds < deadline)) {
        deadline = work.timeout_seconds;
      }
    }
    return deadline;
  }

  // Takes the next collective: the leader's oldest, or the one with the key the leader proposed.
  absl::Status Next(Work* work) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [this] { return !queue_.empty(); });
    const uint64_t sequence = sequence_++;
    Proposal& slot = channel_->proposals[sequence % kProposalRing];
    if (spec_.group_rank == 0) {
      *work = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      slot = ProposalOf(*work, sequence);
      channel_->proposed.store(sequence + 1, std::memory_order_seq_cst);
      Wake();
      return absl::OkStatus();
    }
    double deadline = QueuedDeadline();
    lock.unlock();
    absl::Status status = WaitFor([&] { return channel_->proposed.load(std::memory_order_acquire) > sequence; },
                                  deadline, "the group's leader to start the next collective", {0});
    if (!status.ok()) return status;
    const Proposal proposal = slot;
    if (proposal.sequence != sequence) {
      return Abort(absl::InternalError(
          absl::StrCat("world rank ", MyWorldRank(), ": shared-memory collectives lost their order (operation ",
                       sequence, " was overwritten by operation ", proposal.sequence, ")")));
    }
    lock.lock();
    for (;;) {
      auto found = std::find_if(queue_.begin(), queue_.end(),
                                [&](const Work& w) { return w.instance_key == proposal.instance_key; });
      if (found != queue_.end()) {
        *work = std::move(*found);
        queue_.erase(found);
        break;
      }
      deadline = QueuedDeadline();
      lock.unlock();
      status = CheckFailures(deadline, "this rank to reach the collective the group's leader runs", {});
      if (!status.ok()) return status;
      lock.lock();
      ready_.wait_for(lock, std::chrono::milliseconds(10));
    }
    lock.unlock();
    const Proposal mine = ProposalOf(*work, sequence);
    if (!SameOperation(mine, proposal)) {
      return Abort(absl::InvalidArgumentError(
          absl::StrCat("Shape mismatch in a shared-memory collective (instance key ", proposal.instance_key,
                       "): world rank ", MyWorldRank(), " runs an ", Describe(mine), ", world rank ",
                       spec_.world_ranks[0], " an ", Describe(proposal))));
    }
    return absl::OkStatus();
  }

  // One round per chunk; each round has kPhases posts: copied in, reduced (two-shot only), done reading.
  absl::Status Run(const Work& work) {
    if (work.kind == kReduceScatter || work.kind == kAllToAll) return RunSliced(work);
    const size_t chunk = segment_->chunk_bytes();
    const size_t rounds = std::max<size_t>(1, (work.bytes + chunk - 1) / chunk);
    const int me = spec_.group_rank;
    const bool sends = work.kind != kBroadcast || me == work.root;
    std::vector<int> everyone(Members());
    for (int k = 0; k < Members(); ++k) everyone[k] = k;
    std::vector<const char*> sources(Members());
    const double deadline = work.timeout_seconds;
    for (size_t r = 0; r < rounds; ++r) {
      const uint64_t a = round_++;
      const uint64_t base = kPhases * a;
      const int buffer = static_cast<int>(a % 2);
      const size_t offset = r * chunk;
      const size_t len = std::min(chunk, work.bytes - std::min(work.bytes, offset));
      if (sends && a >= 2) {  // the round before last used this buffer: everyone must have read it
        absl::Status status = WaitPosted(base - kPhases, everyone, deadline);
        if (!status.ok()) return status;
      }
      if (work.kind == kAllReduce && Members() == 2 && len >= kTwoShotBytes) {
        absl::Status status = ReducePair(work, base, buffer, offset, len, deadline);
        if (!status.ok()) return status;
        continue;
      }
      if (sends && len > 0) std::memcpy(segment_->Buffer(channel_index_, MySlot(), buffer), work.input + offset, len);
      Post(base + 1);
      if (work.kind == kAllGather && len > 0) {  // its own piece needs no peer: copied while they copy theirs in
        std::memcpy(work.output + me * work.bytes + offset, work.input + offset, len);
      }
      absl::Status status = work.kind == kBroadcast ? WaitPosted(base + 1, {work.root}, deadline)
                                                    : WaitPosted(base + 1, everyone, deadline);
      if (!status.ok()) return status;
      for (int k = 0; k < Members(); ++k) sources[k] = segment_->Buffer(channel_index_, spec_.slots[k], buffer);
      if (work.kind == kAllReduce && Members() > 2 && len >= kTwoShotBytes) {
        status = ReduceTwoShot(work, base, sources, work.output + offset, len, deadline);
        if (!status.ok()) return status;
      } else {
        Post(base + 2);
        if (len > 0) Consume(work, sources, offset, len);
      }
      Post(base + 3);
    }
    return absl::OkStatus();
  }

  // Two members, from kTwoShotBytes on: each copies in only the half of the piece the other reduces, reduces its
  // own half from its input and the other's copy into its buffer (never into the output, which may be the input),
  // copies that out, and copies the other's half out of the other's buffer: about a tenth fewer bytes moved than
  // the one-shot round, and each reduction done once.
  absl::Status ReducePair(const Work& work, uint64_t base, int buffer, size_t offset, size_t len, double deadline) {
    const size_t element = tensorflow::DataTypeSize(work.dtype);
    const size_t half = len / element / 2 * element;
    const int me = spec_.group_rank, peer = 1 - me;
    auto begin = [&](int k) { return k == 0 ? size_t{0} : half; };
    auto size = [&](int k) { return k == 0 ? half : len - half; };
    char* mine = segment_->Buffer(channel_index_, MySlot(), buffer);
    const char* theirs = segment_->Buffer(channel_index_, spec_.slots[peer], buffer);
    std::memcpy(mine + begin(peer), work.input + offset + begin(peer), size(peer));
    Post(base + 1);
    absl::Status status = WaitPosted(base + 1, {peer}, deadline);
    if (!status.ok()) return status;
    const char* sources[2];
    sources[me] = work.input + offset + begin(me);
    sources[peer] = theirs + begin(me);
    Reduce(work.dtype, work.reduction, sources, 2, mine + begin(me), size(me));
    std::memcpy(work.output + offset + begin(me), mine + begin(me), size(me));
    Post(base + 2);
    status = WaitPosted(base + 2, {peer}, deadline);
    if (!status.ok()) return status;
    std::memcpy(work.output + offset + begin(peer), theirs + begin(peer), size(peer));
    Post(base + 3);
    return absl::OkStatus();
  }

  // Reduce-scatter and all-to-all: each round moves one piece of every member's N slices (N pieces per buffer).
  // Reduce-scatter: member k reduces the pieces of slice k. All-to-all: member k copies piece k of member j's
  // buffer to slice j of its output.
  absl::Status RunSliced(const Work& work) {
    const int n = Members();
    const int me = spec_.group_rank;
    const size_t element = tensorflow::DataTypeSize(work.dtype);
    const size_t slice = work.bytes / n;
    const size_t piece = std::max<size_t>(element, segment_->chunk_bytes() / n / element * element);
    const size_t rounds = std::max<size_t>(1, (slice + piece - 1) / piece);
    std::vector<int> everyone(n);
    for (int k = 0; k < n; ++k) everyone[k] = k;
    std::vector<const char*> sources(n);
    for (size_t r = 0; r < rounds; ++r) {
      const uint64_t a = round_++;
      const uint64_t base = kPhases * a;
      const int buffer = static_cast<int>(a % 2);
      const size_t offset = r * piece;
      const size_t len = std::min(piece, slice - std::min(slice, offset));
      if (a >= 2) {
        absl::Status status = WaitPosted(base - kPhases, everyone, work.timeout_seconds);
        if (!status.ok()) return status;
      }
      char* mine = segment_->Buffer(channel_index_, MySlot(), buffer);
      for (int k = 0; k < n && len > 0; ++k) std::memcpy(mine + k * piece, work.input + k * slice + offset, len);
      Post(base + 1);
      absl::Status status = WaitPosted(base + 1, everyone, work.timeout_seconds);
      if (!status.ok()) return status;
      for (int k = 0; k < n; ++k) sources[k] = segment_->Buffer(channel_index_, spec_.slots[k], buffer) + me * piece;
      if (len > 0 && work.kind == kReduceScatter) {
        Reduce(work.dtype, work.reduction, sources.data(), n, work.output + offset, len);
      } else {
        for (int k = 0; k < n && len > 0; ++k) std::memcpy(work.output + k * slice + offset, sources[k], len);
      }
      Post(base + 2);
      Post(base + 3);
    }
    return absl::OkStatus();
  }

  // One-shot: every member combines or copies the whole piece itself.
  void Consume(const Work& work, const std::vector<const char*>& sources, size_t offset, size_t len) {
    switch (work.kind) {
      case kAllReduce:
        Reduce(work.dtype, work.reduction, sources.data(), Members(), work.output + offset, len);
        break;
      case kAllGather:
        for (int k = 0; k < Members(); ++k) {
          if (k != spec_.group_rank) std::memcpy(work.output + k * work.bytes + offset, sources[k], len);
        }
        break;
      case kBroadcast:
        if (spec_.group_rank != work.root) {
          std::memcpy(work.output + offset, sources[work.root], len);
        } else if (work.output != work.input) {
          std::memcpy(work.output + offset, work.input + offset, len);
        }
        break;
    }
  }

  // Two-shot: member k reduces part k of the piece and publishes it in its own buffer (only member k reads
  // part k of the buffers, so it may overwrite its own), then every member copies the parts out.
  absl::Status ReduceTwoShot(const Work& work, uint64_t base, const std::vector<const char*>& sources, char* out,
                             size_t len, double deadline) {
    const size_t element = tensorflow::DataTypeSize(work.dtype);
    const size_t count = len / element;
    const int n = Members();
    auto part = [&](int k) { return std::make_pair(count * k / n * element, count * (k + 1) / n * element); };
    const int me = spec_.group_rank;
    const auto [begin, end] = part(me);
    std::vector<const char*> shifted(n);
    for (int k = 0; k < n; ++k) shifted[k] = sources[k] + begin;
    Reduce(work.dtype, work.reduction, shifted.data(), n, out + begin, end - begin);
    std::memcpy(const_cast<char*>(sources[me]) + begin, out + begin, end - begin);
    Post(base + 2);
    std::vector<int> everyone(n);
    for (int k = 0; k < n; ++k) everyone[k] = k;
    absl::Status status = WaitPosted(base + 2, everyone, deadline);
    if (!status.ok()) return status;
    for (int k = 0; k < n; ++k) {
      if (k == me) continue;
      const auto [from, to] = part(k);
      std::memcpy(out + from, sources[k] + from, to - from);
    }
    return absl::OkStatus();
  }

  void Post(uint64_t value) {
    channel_->posted[MySlot()].value.store(value, std::memory_order_seq_cst);
    Wake();
  }

  void Wake() {
    channel_->wake.fetch_add(1, std::memory_order_seq_cst);
    if (channel_->sleepers.load(std::memory_order_seq_cst) > 0) FutexWakeAll(&channel_->wake);
  }

  absl::Status WaitPosted(uint64_t target, const std::vector<int>& members, double deadline) {
    return WaitFor(
        [&] {
          for (int k : members) {
            if (channel_->posted[spec_.slots[k]].value.load(std::memory_order_acquire) < target) return false;
          }
          return true;
        },
        deadline, "its peers", members);
  }

  // Waits until `ready()`: spins briefly, then sleeps on the channel's futex, checking for failures.
  template <typename Ready>
  absl::Status WaitFor(Ready ready, double deadline, const char* what, const std::vector<int>& peers) {
    const double spin_until = Now() + kSpinSeconds;
    for (int i = 0;; ++i) {
      if (ready()) return absl::OkStatus();
      if ((i & 63) == 63 && Now() > spin_until) break;
      CpuRelax();
    }
    for (;;) {
      absl::Status status = CheckFailures(deadline, what, peers);
      if (!status.ok()) return status;
      channel_->sleepers.fetch_add(1, std::memory_order_seq_cst);
      const uint32_t seen = channel_->wake.load(std::memory_order_seq_cst);
      if (!ready()) FutexWait(&channel_->wake, seen, kSleepSliceNs);
      channel_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
      if (ready()) return absl::OkStatus();
    }
  }

  // Non-OK when the group must stop waiting: another rank aborted, this step was cancelled, the deadline
  // passed, or a member's process ended (checked every kPeerCheckSeconds).
  absl::Status CheckFailures(double deadline, const char* what, const std::vector<int>& peers) {
    if (segment_->Aborted()) return absl::AbortedError("Collective ops is aborted by: " + segment_->AbortMessage());
    if (cancelled_.load()) {
      return Abort(absl::CancelledError(absl::StrCat(
          "world rank ", MyWorldRank(), ": its step was cancelled while it waited in a shared-memory collective")));
    }
    const double now = Now();
    if (deadline > 0 && now > deadline) {
      return Abort(absl::DeadlineExceededError(absl::StrCat("world rank ", MyWorldRank(), " waited for ", what,
                                                            " in a shared-memory collective past its timeout")));
    }
    if (now - last_peer_check_ < kPeerCheckSeconds) return absl::OkStatus();
    last_peer_check_ = now;
    for (int k = 0; k < Members(); ++k) {
      if (k == spec_.group_rank) continue;
      const int pid = segment_->header()->pids[spec_.slots[k]].load(std::memory_order_acquire);
      if (pid <= 0) continue;
      if (pidfds_[k] < 0 || pids_[k] != pid) {
        if (pidfds_[k] >= 0) close(pidfds_[k]);
        pids_[k] = pid;
        pidfds_[k] = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
        if (pidfds_[k] < 0 && errno != ESRCH) continue;  // cannot watch it: the timeout still bounds the wait
      }
      struct pollfd watched = {pidfds_[k], POLLIN, 0};
      if (pidfds_[k] < 0 || poll(&watched, 1, 0) > 0) {
        return Abort(absl::UnavailableError(absl::StrCat(
            "world rank ", spec_.world_ranks[k], " has exited (process ", pid, ") while world rank ", MyWorldRank(),
            " waited for ", peers.empty() ? "it" : "its peers", " in a shared-memory collective")));
      }
    }
    return absl::OkStatus();
  }

  // Aborts the segment with `status`'s message and returns `status`.
  absl::Status Abort(absl::Status status) {
    segment_->Abort(std::string(status.message()));
    return status;
  }

  const GroupSpec spec_;
  Segment* const segment_;
  Channel* const channel_;
  const int channel_index_;
  uint64_t round_ = 0;
  uint64_t sequence_ = 0;
  std::vector<int> pidfds_;
  std::vector<int> pids_;
  double last_peer_check_ = 0;
  std::atomic<bool> cancelled_{false};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Work> queue_;
  absl::Status failure_;
};

absl::Status Communicator::Get(const GroupSpec& spec, Communicator** communicator) {
  static std::mutex* registry_mutex = new std::mutex;
  static auto* registry = new std::map<uint64_t, Communicator*>;  // never destroyed: threads outlive exit
  const int members = static_cast<int>(spec.slots.size());
  if (members < 2 || members != static_cast<int>(spec.world_ranks.size()) || spec.group_rank < 0 ||
      spec.group_rank >= members) {
    return absl::InvalidArgumentError(
        absl::StrCat("shared-memory collectives: bad group: ", members, " slots, group rank ", spec.group_rank));
  }
  for (int slot : spec.slots) {
    if (slot < 0 || slot >= spec.local_size) {
      return absl::InvalidArgumentError(absl::StrCat("shared-memory collectives: slot ", slot, " of slots [",
                                                     absl::StrJoin(spec.slots, ", "), "] is not below ",
                                                     spec.local_size));
    }
  }
  std::lock_guard<std::mutex> lock(*registry_mutex);
  auto found = registry->find(spec.group_key);
  if (found != registry->end()) {
    *communicator = found->second;
    return absl::OkStatus();
  }
  Segment* segment = nullptr;
  absl::Status status = Segment::Attach(spec.local_size, &segment);
  if (!status.ok()) return status;
  int channel = 0;
  status = segment->ClaimChannel(spec.group_key, MembersHash(spec), &channel);
  if (!status.ok()) return status;
  *communicator = new Communicator(new Impl(spec, segment, channel));
  (*registry)[spec.group_key] = *communicator;
  return absl::OkStatus();
}

void Communicator::Enqueue(Work work) { impl_->Enqueue(std::move(work)); }

void Communicator::Cancel() { impl_->Cancel(); }

}  // namespace shm
}  // namespace npu_bridge
