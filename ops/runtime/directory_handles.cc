#include "ops/runtime/directory_handles.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace npu_bridge {
namespace {

// Open directories kept (step directories come and go; their parents stay open while they are).
constexpr size_t kHeldDirectories = 64;
constexpr int kDirectoryFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

struct HeldDirectory {
  Directory directory;
  bool pinned;  // the first directory below a root: never closed while it exists
  uint64_t last_use;
};

std::mutex mu;
std::map<std::string, HeldDirectory>* held = new std::map<std::string, HeldDirectory>();  // by path; never destroyed
uint64_t uses = 0;

absl::Status Refused(const std::string& path, const std::string& why) {
  return absl::FailedPreconditionError("refusing to write into " + path + ": " + why);
}

// Why an entry with `info` (from lstat) is not a directory of ours to write into; "" when it is one.
std::string NotOurs(const struct stat& info) {
  if (S_ISLNK(info.st_mode)) return "it is a symlink (files are never written through a link inside a dump tree)";
  if (!S_ISDIR(info.st_mode)) return "it exists and is not a directory";
  if (info.st_uid != geteuid()) {
    return "it belongs to user id " + std::to_string(info.st_uid) + ", not to this user (" + std::to_string(geteuid()) +
           "); someone else made it";
  }
  return "";
}

// The root without trailing slashes, and the names of the directories from it down to `dir`.
absl::Status SplitBelowRoot(const std::string& given_root, const std::string& dir, std::string* root,
                            std::vector<std::string>* names) {
  *root = given_root;
  while (root->size() > 1 && root->back() == '/') root->pop_back();
  const bool below = *root == "/" ? !dir.empty() && dir[0] == '/'
                                  : dir.compare(0, root->size(), *root) == 0 &&
                                        (dir.size() == root->size() || dir[root->size()] == '/');
  if (root->empty() || !below) {
    return absl::InvalidArgumentError("the dump directory " + dir + " is not below its root \"" + given_root + "\"");
  }
  size_t start = root->size();
  while (start < dir.size()) {
    size_t end = dir.find('/', start + 1);
    if (end == std::string::npos) end = dir.size();
    std::string name = dir.substr(start + 1, end - start - 1);
    start = end;
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      return absl::InvalidArgumentError("the dump directory " + dir + " climbs out of its root with '..'");
    }
    names->push_back(std::move(name));
  }
  return absl::OkStatus();
}

// The path of the first `count` names below `root`: the key of a held directory.
std::string PathOf(const std::string& root, const std::vector<std::string>& names, size_t count) {
  std::string path = root == "/" ? "" : root;
  for (size_t i = 0; i < count; ++i) path += "/" + names[i];
  return path.empty() ? "/" : path;
}

// The root as the user gave it (symlinks followed), created with its parents when missing.
absl::StatusOr<Directory> OpenRoot(const std::string& root, mode_t mode) {
  for (size_t pos = 1; pos <= root.size(); ++pos) {
    if (pos != root.size() && root[pos] != '/') continue;
    const std::string prefix = root.substr(0, pos);
    if (mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) {
      return absl::InternalError(ErrnoText("cannot create directory", prefix));
    }
  }
  const int fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(ErrnoText("cannot open directory", root));
  return std::make_shared<const DirectoryHandle>(fd);
}

// parent/name, made here or checked to be a real directory of this user, opened without following a symlink.
absl::StatusOr<Directory> OpenChild(const Directory& parent, const std::string& name, const std::string& path,
                                    mode_t mode) {
  if (mkdirat(parent->fd(), name.c_str(), mode) != 0 && errno != EEXIST) {
    return absl::InternalError(ErrnoText("cannot create directory", path));
  }
  const int fd = openat(parent->fd(), name.c_str(), kDirectoryFlags);
  if (fd < 0) {
    const int error = errno;
    struct stat info;
    if ((error == ELOOP || error == ENOTDIR) && fstatat(parent->fd(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0) {
      const std::string why = NotOurs(info);
      if (!why.empty()) return Refused(path, why);
    }
    errno = error;
    return absl::InternalError(ErrnoText("cannot open directory", path));
  }
  Directory directory = std::make_shared<const DirectoryHandle>(fd);
  struct stat info;
  if (fstat(fd, &info) != 0) return absl::InternalError(ErrnoText("cannot examine directory", path));
  const std::string why = NotOurs(info);
  if (!why.empty()) return Refused(path, why);
  return directory;
}

bool HoldsOthers(std::map<std::string, HeldDirectory>::iterator it) {
  const auto next = std::next(it);
  return next != held->end() && next->first.size() > it->first.size() &&
         next->first.compare(0, it->first.size() + 1, it->first + "/") == 0;
}

// Closes the least recently used directories that hold no other open one, down to the limit.
void EvictLocked() {
  while (held->size() > kHeldDirectories) {
    auto oldest = held->end();
    for (auto it = held->begin(); it != held->end(); ++it) {
      if (it->second.pinned || HoldsOthers(it)) continue;
      if (oldest == held->end() || it->second.last_use < oldest->second.last_use) oldest = it;
    }
    if (oldest == held->end()) return;
    held->erase(oldest);
  }
}

// Forgets `path` and every held directory below it.
void ForgetLocked(const std::string& path) {
  held->erase(path);
  const std::string prefix = path + "/";
  auto it = held->lower_bound(prefix);
  while (it != held->end() && it->first.compare(0, prefix.size(), prefix) == 0) it = held->erase(it);
}

}  // namespace

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

DirectoryHandle::~DirectoryHandle() { close(fd_); }

absl::StatusOr<Directory> OpenDirectory(const std::string& given_root, const std::string& dir, mode_t mode) {
  std::string root;
  std::vector<std::string> names;
  const absl::Status split = SplitBelowRoot(given_root, dir, &root, &names);
  if (!split.ok()) return split;
  std::lock_guard<std::mutex> lock(mu);
  size_t depth = names.size();
  Directory current;
  for (; depth > 0; --depth) {
    const auto found = held->find(PathOf(root, names, depth));
    if (found != held->end()) {
      current = found->second.directory;
      found->second.last_use = ++uses;
      break;
    }
  }
  if (depth == 0) {
    absl::StatusOr<Directory> opened = OpenRoot(root, mode);
    if (!opened.ok()) return opened.status();
    current = *std::move(opened);
  }
  for (; depth < names.size(); ++depth) {
    const std::string path = PathOf(root, names, depth + 1);
    absl::StatusOr<Directory> opened = OpenChild(current, names[depth], path, mode);
    if (!opened.ok()) return opened.status();
    current = *std::move(opened);
    (*held)[path] = HeldDirectory{current, depth == 0, ++uses};
  }
  EvictLocked();
  return current;
}

void ForgetRemovedDirectories(const std::string& given_root, const std::string& dir) {
  std::string root;
  std::vector<std::string> names;
  if (!SplitBelowRoot(given_root, dir, &root, &names).ok()) return;
  std::lock_guard<std::mutex> lock(mu);
  for (size_t depth = 1; depth <= names.size(); ++depth) {
    const std::string path = PathOf(root, names, depth);
    const auto found = held->find(path);
    if (found == held->end()) continue;
    struct stat info;
    // A removed directory has no links left; a moved one keeps them (and keeps being written into).
    if (fstat(found->second.directory->fd(), &info) != 0 || info.st_nlink == 0) {
      ForgetLocked(path);
      return;
    }
  }
}

}  // namespace npu_bridge
