#include "ops/runtime/atomic_files.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace npu_bridge {
namespace {

constexpr int kIovBatch = 512;
// Appended files kept in memory after they are written (the newest ones: a step's statistic.csv grows until
// the step ends, so only the files of the last few steps still get rows).
constexpr size_t kKeptCleanFiles = 16;
// Rows that could not be written are kept for a retry up to this much memory.
constexpr int64_t kMaxAppendedBytes = 64ll << 20;
// A file forgotten earlier and appended to again is read back up to this size.
constexpr off_t kMaxReloadBytes = 64ll << 20;
// Temporary names: ".tmp." + 16 hex digits + "." + the file's name, cut to fit NAME_MAX (255 bytes).
constexpr size_t kTemporaryNameKept = 255 - 22;
// New names tried when a temporary name exists already (only chance or a planted file makes it exist).
constexpr int kNameAttempts = 4;
constexpr int kNewFileFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;

std::atomic<int> file_mode{0600};
std::atomic<int> directory_mode{0700};

// 16 hex digits from the kernel's random source (getrandom, else /dev/urandom); false when neither answers.
bool RandomHex(std::string* hex) {
  unsigned char bytes[8];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got < sizeof(bytes)) {
    got = 0;
    const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    while (got < sizeof(bytes)) {
      const ssize_t n = read(fd, bytes + got, sizeof(bytes) - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    close(fd);
    if (got < sizeof(bytes)) return false;
  }
  static const char kDigits[] = "0123456789abcdef";
  hex->clear();
  for (unsigned char b : bytes) {
    hex->push_back(kDigits[b >> 4]);
    hex->push_back(kDigits[b & 15]);
  }
  return true;
}

// Reads back dir/name, a file this process's user wrote (nothing when it does not exist, is a symlink, special,
// another user's or too large).
std::string ReadBack(const Directory& dir, const std::string& name) {
  const int fd = openat(dir->fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != geteuid() || info.st_size > kMaxReloadBytes) {
    close(fd);
    return "";
  }
  std::string content(static_cast<size_t>(info.st_size), '\0');
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t got = read(fd, &content[done], content.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  close(fd);
  content.resize(done);
  return content;
}

// Creates .tmp.{random}.{name} in `dir`; returns its descriptor (or -1 with errno set) and its name.
int CreateTemporary(const Directory& dir, const std::string& name, std::string* temporary) {
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    std::string hex;
    if (!RandomHex(&hex)) {
      errno = EAGAIN;
      *temporary = ".tmp.*." + name;
      return -1;
    }
    *temporary = ".tmp." + hex + "." + name.substr(0, kTemporaryNameKept);
    const int fd = openat(dir->fd(), temporary->c_str(), kNewFileFlags, file_mode.load(std::memory_order_relaxed));
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

}  // namespace

void SetFileModes(int file, int directory) {
  if (file >= 0) file_mode = file & 07777;
  if (directory >= 0) directory_mode = directory & 07777;
}

absl::Status EnsureDirectory(const std::string& root, const std::string& dir) {
  return OpenDirectory(root, dir, directory_mode.load(std::memory_order_relaxed)).status();
}

absl::Status WriteFileAtomically(const std::string& root, const std::string& dir, const std::string& name,
                                 const std::vector<Piece>& pieces) {
  const mode_t mode = directory_mode.load(std::memory_order_relaxed);
  absl::StatusOr<Directory> held = OpenDirectory(root, dir, mode);
  if (!held.ok()) return held.status();
  std::string temporary;
  int fd = CreateTemporary(*held, name, &temporary);
  if (fd < 0 && errno == ENOENT) {  // the directory was removed: make it again
    ForgetRemovedDirectories(root, dir);
    held = OpenDirectory(root, dir, mode);
    if (!held.ok()) return held.status();
    fd = CreateTemporary(*held, name, &temporary);
  }
  const int dir_fd = (*held)->fd();
  if (fd < 0) return absl::InternalError(ErrnoText("cannot create", dir + "/" + temporary));
  auto fail = [&](const char* what) {
    const absl::Status error = absl::InternalError(ErrnoText(what, dir + "/" + temporary));
    close(fd);
    unlinkat(dir_fd, temporary.c_str(), 0);
    return error;
  };
  std::vector<iovec> iov;
  for (const Piece& p : pieces) {
    if (p.size) iov.push_back({const_cast<char*>(p.data), p.size});
  }
  size_t next = 0;
  while (next < iov.size()) {
    const int count = static_cast<int>(std::min<size_t>(kIovBatch, iov.size() - next));
    const ssize_t written = writev(fd, &iov[next], count);
    if (written < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write");
    }
    size_t left = static_cast<size_t>(written);
    while (next < iov.size() && left >= iov[next].iov_len) left -= iov[next++].iov_len;
    if (left) {  // partial write: advance inside the current piece
      iov[next].iov_base = static_cast<char*>(iov[next].iov_base) + left;
      iov[next].iov_len -= left;
    }
  }
  if (close(fd) != 0) {
    const absl::Status error = absl::InternalError(ErrnoText("cannot close", dir + "/" + temporary));
    unlinkat(dir_fd, temporary.c_str(), 0);
    return error;
  }
  if (renameat(dir_fd, temporary.c_str(), dir_fd, name.c_str()) != 0) {
    const absl::Status error = absl::InternalError(ErrnoText("cannot rename", dir + "/" + name));
    unlinkat(dir_fd, temporary.c_str(), 0);
    return error;
  }
  return absl::OkStatus();
}

void AppendedFiles::Append(const std::string& root, const std::string& dir, const std::string& name,
                           const std::string& header, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::lock_guard<std::mutex> lock(mu_);
  auto found = files_.find(path);
  if (found == files_.end()) {
    absl::StatusOr<Directory> held = OpenDirectory(root, dir, directory_mode.load(std::memory_order_relaxed));
    File file{root, dir, name, held.ok() ? ReadBack(*held, name) : ""};
    if (file.content.empty()) file.content = header.empty() ? "" : header + "\n";
    bytes_ += file.content.size();
    found = files_.emplace(path, std::move(file)).first;
  }
  found->second.content += text;
  found->second.dirty = true;
  found->second.last_append = ++appends_;
  bytes_ += text.size();
}

bool AppendedFiles::dirty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(files_.begin(), files_.end(), [](const auto& entry) { return entry.second.dirty; });
}

std::vector<AppendedFiles::Failure> AppendedFiles::WriteDirty(std::vector<std::string>* unwritten) {
  std::vector<Failure> failures;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [path, file] : files_) {
    if (!file.dirty) continue;
    const absl::Status status =
        WriteFileAtomically(file.root, file.dir, file.name, {{file.content.data(), file.content.size()}});
    if (status.ok()) {
      file.dirty = file.failing = false;
      continue;
    }
    if (!file.failing) failures.push_back({file.dir, path, std::string(status.message()), false});
    file.failing = true;
  }
  // Over the memory limit, the oldest files that cannot be written are given up.
  while (bytes_ > kMaxAppendedBytes) {
    auto oldest = files_.end();
    for (auto it = files_.begin(); it != files_.end(); ++it) {
      if (it->second.dirty && (oldest == files_.end() || it->second.last_append < oldest->second.last_append)) {
        oldest = it;
      }
    }
    if (oldest == files_.end()) break;
    failures.push_back({oldest->second.dir, oldest->first, "its rows no longer fit in memory", true});
    bytes_ -= oldest->second.content.size();
    files_.erase(oldest);
  }
  ForgetOldLocked();
  if (unwritten) {
    for (const auto& [path, file] : files_) {
      if (file.dirty) unwritten->push_back(path);
    }
  }
  return failures;
}

void AppendedFiles::ForgetOldLocked() {
  std::vector<std::pair<uint64_t, std::string>> clean;
  for (const auto& [path, file] : files_) {
    if (!file.dirty) clean.emplace_back(file.last_append, path);
  }
  if (clean.size() <= kKeptCleanFiles) return;
  std::sort(clean.begin(), clean.end());
  for (size_t i = 0; i + kKeptCleanFiles < clean.size(); ++i) {
    bytes_ -= files_[clean[i].second].content.size();
    files_.erase(clean[i].second);
  }
}

}  // namespace npu_bridge
