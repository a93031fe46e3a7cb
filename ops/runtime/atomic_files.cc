#include "ops/runtime/atomic_files.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

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

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Reads a regular file back (nothing when it does not exist, is special or too large).
std::string ReadBack(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size > kMaxReloadBytes) return "";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
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

}  // namespace

absl::Status EnsureDirectory(const std::string& dir, bool recheck) {
  static std::mutex mu;
  static auto* known = new std::unordered_set<std::string>();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!recheck && known->count(dir)) return absl::OkStatus();
  }
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string prefix = dir.substr(0, pos);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(ErrnoText("cannot create directory", prefix));
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  known->insert(dir);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& dir, const std::string& name, const std::vector<Piece>& pieces) {
  const std::string path = dir + "/" + name;
  const std::string temporary = dir + "/.tmp." + name;
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT && EnsureDirectory(dir, /*recheck=*/true).ok()) {
    fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (fd < 0) return absl::InternalError(ErrnoText("cannot create", temporary));
  auto fail = [&](const char* what) {
    const absl::Status error = absl::InternalError(ErrnoText(what, temporary));
    close(fd);
    unlink(temporary.c_str());
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
    const absl::Status error = absl::InternalError(ErrnoText("cannot close", temporary));
    unlink(temporary.c_str());
    return error;
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    const absl::Status error = absl::InternalError(ErrnoText("cannot rename", path));
    unlink(temporary.c_str());
    return error;
  }
  return absl::OkStatus();
}

void AppendedFiles::Append(const std::string& dir, const std::string& name, const std::string& header,
                           const std::string& text) {
  const std::string path = dir + "/" + name;
  std::lock_guard<std::mutex> lock(mu_);
  auto found = files_.find(path);
  if (found == files_.end()) {
    File file{dir, name, ReadBack(path)};
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
    const absl::Status status = WriteFileAtomically(file.dir, file.name, {{file.content.data(), file.content.size()}});
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
