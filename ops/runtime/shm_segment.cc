// The job's shared-memory segment: attaching to npu-run's memfd, channels, abort, futex waits.
#include "ops/runtime/shm_segment.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace npu_bridge {
namespace shm {

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kMiB = 1 << 20;

size_t RoundUp(size_t value, size_t to) { return (value + to - 1) / to * to; }

// 1 MiB per buffer up to 8 slots; less for more slots, so that a channel stays at most 16 MiB.
size_t ChunkBytes(int local_size) {
  if (local_size <= 8) return kMiB;
  const size_t chunk = 8 * kMiB / static_cast<size_t>(local_size) / kPage * kPage;
  return chunk < 64 * 1024 ? 64 * 1024 : chunk;
}

// A descriptor number from the environment is only trusted when it is npu-run's memfd: a process started by a
// rank may inherit the variable without the descriptor, and the number may then name some other file.
absl::Status CheckIsSegment(int fd) {
  char link[256];
  const std::string path = absl::StrCat("/proc/self/fd/", fd);
  const ssize_t n = readlink(path.c_str(), link, sizeof(link) - 1);
  if (n < 0) return absl::FailedPreconditionError(absl::StrCat(kFdVariable, "=", fd, " names no open descriptor"));
  link[n] = '\0';
  const std::string expected = absl::StrCat("/memfd:", kMemfdName);
  if (std::strncmp(link, expected.c_str(), expected.size()) != 0 || fcntl(fd, F_GET_SEALS) < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(kFdVariable, "=", fd, " names ", link, ", not the job's shared-memory segment made by npu-run"));
  }
  return absl::OkStatus();
}

std::mutex attach_mutex;
Segment* attached = nullptr;

}  // namespace

absl::Status Segment::Attach(int local_size, Segment** segment) {
  std::lock_guard<std::mutex> lock(attach_mutex);
  if (local_size < 1 || local_size > kMaxSlots) {
    return absl::InvalidArgumentError(
        absl::StrCat("shared-memory collectives: ", local_size, " ranks on this host; at most ", kMaxSlots));
  }
  if (attached != nullptr) {
    if (attached->local_size() != local_size) {
      return absl::InvalidArgumentError(absl::StrCat("shared-memory collectives: the segment serves ",
                                                     attached->local_size(), " ranks, not ", local_size));
    }
    *segment = attached;
    return absl::OkStatus();
  }
  const char* text = std::getenv(kFdVariable);
  char* end = nullptr;
  const long fd = text == nullptr ? -1 : std::strtol(text, &end, 10);
  if (text == nullptr || *text == '\0' || *end != '\0' || fd < 0 || fd > INT_MAX) {
    return absl::FailedPreconditionError(absl::StrCat(kFdVariable, " is not set to a descriptor number"));
  }
  absl::Status status = CheckIsSegment(static_cast<int>(fd));
  if (!status.ok()) return status;
  const size_t chunk = ChunkBytes(local_size);
  const size_t total = RoundUp(sizeof(Header), kPage) + kMaxChannels * static_cast<size_t>(local_size) * 2 * chunk;
  struct stat info;
  if (fstat(static_cast<int>(fd), &info) != 0) {
    return absl::InternalError(absl::StrCat("cannot stat the shared-memory segment: ", std::strerror(errno)));
  }
  // Every rank grows it to the same size; a smaller size is only ever the initial empty file.
  if (static_cast<size_t>(info.st_size) < total && ftruncate(static_cast<int>(fd), static_cast<off_t>(total)) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot size the shared-memory segment to ", total, " bytes: ", std::strerror(errno)));
  }
  void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
  if (base == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot map the shared-memory segment: ", std::strerror(errno)));
  }
  fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);  // programs this rank starts do not need it
  attached = new Segment(static_cast<Header*>(base), local_size, chunk);
  *segment = attached;
  return absl::OkStatus();
}

char* Segment::Buffer(int channel, int slot, int buffer) const {
  const size_t channel_bytes = static_cast<size_t>(local_size_) * 2 * chunk_bytes_;
  char* data = reinterpret_cast<char*>(header_) + RoundUp(sizeof(Header), kPage);
  return data + channel * channel_bytes + (static_cast<size_t>(slot) * 2 + buffer) * chunk_bytes_;
}

absl::Status Segment::ClaimChannel(uint64_t group_key, uint64_t members_hash, int* channel) {
  if (group_key == 0) group_key = 1;
  for (int i = 0; i < kMaxChannels; ++i) {
    Channel& c = header_->channels[i];
    uint64_t found = c.group_key.load(std::memory_order_acquire);
    if (found == 0 && c.group_key.compare_exchange_strong(found, group_key, std::memory_order_acq_rel)) {
      found = group_key;
      uint64_t none = 0;
      c.members_hash.compare_exchange_strong(none, members_hash, std::memory_order_acq_rel);
    }
    if (found != group_key) continue;
    uint64_t hash = c.members_hash.load(std::memory_order_acquire);
    for (int tries = 0; hash == 0 && tries < 100000; ++tries) {  // the claimer stores it next (bounded: it may die)
      usleep(100);
      hash = c.members_hash.load(std::memory_order_acquire);
    }
    if (hash != members_hash) {
      return absl::InvalidArgumentError(
          "shared-memory collectives: ranks disagree on the members of a group with the same key");
    }
    *channel = i;
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("shared-memory collectives: more than ", kMaxChannels,
                   " groups and one-way send routes use the segment; set NPU_BRIDGE_COLLECTIVES=tf"));
}

void Segment::Abort(const std::string& message) {
  if (header_->abort_claimed.exchange(1, std::memory_order_acq_rel) == 0) {
    const size_t n = std::min(message.size(), sizeof(header_->abort_message) - 1);
    std::memcpy(header_->abort_message, message.data(), n);
    header_->abort_message[n] = '\0';
    header_->aborted.store(1, std::memory_order_release);
  }
  for (Channel& c : header_->channels) {
    if (c.group_key.load(std::memory_order_acquire) == 0) continue;
    c.wake.fetch_add(1);
    FutexWakeAll(&c.wake);
  }
}

std::string Segment::AbortMessage() const {
  if (!Aborted()) return "";
  return std::string(header_->abort_message, strnlen(header_->abort_message, sizeof(header_->abort_message)));
}

void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeout_ns) {
  struct timespec timeout;
  timeout.tv_sec = timeout_ns / 1000000000;
  timeout.tv_nsec = timeout_ns % 1000000000;
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &timeout, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace shm
}  // namespace npu_bridge
