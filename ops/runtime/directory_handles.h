// Directories of artifact trees, held open. A directory below the root the user named is created or opened once
// (mkdirat / openat with O_NOFOLLOW relative to its parent's descriptor) and from then on reached only through
// its descriptor, so renaming it away and putting a symlink or another directory at its path later changes
// nothing: files keep landing in the directory that was opened. A directory that exists must be a real directory
// (not a symlink) owned by this effective user, or it is refused.
#ifndef NPU_BRIDGE_OPS_RUNTIME_DIRECTORY_HANDLES_H_
#define NPU_BRIDGE_OPS_RUNTIME_DIRECTORY_HANDLES_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace npu_bridge {

// An open directory (an O_PATH descriptor); closed when the last user lets go.
class DirectoryHandle {
 public:
  explicit DirectoryHandle(int fd) : fd_(fd) {}
  ~DirectoryHandle();
  DirectoryHandle(const DirectoryHandle&) = delete;
  DirectoryHandle& operator=(const DirectoryHandle&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};
using Directory = std::shared_ptr<const DirectoryHandle>;

// The directory `dir`, below `root` (the directory the user named: it and its parents are taken as they are,
// created as by mkdir -p when missing). Directories between them are created with `mode`, or must be real
// directories of this user; otherwise the error (FailedPrecondition) names the directory and says why. Held
// directories are reused; the deepest ones are closed when too many are open (least recently used first), but
// the first directory below each root and every directory that holds an open one stay open.
absl::StatusOr<Directory> OpenDirectory(const std::string& root, const std::string& dir, mode_t mode);

// "{what} {path}: {the text of errno}", for errors of the file system calls on artifact trees.
std::string ErrnoText(const std::string& what, const std::string& path);

// Lets go of the held directories on the way to `dir` that were removed (not moved), so that the next
// OpenDirectory makes them again.
void ForgetRemovedDirectories(const std::string& root, const std::string& dir);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_DIRECTORY_HANDLES_H_
