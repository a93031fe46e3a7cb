// Files that readers never see half-written, and that land only where the user pointed. Every dump artifact
// goes through here: whole files are written to a new file under an unpredictable hidden name (created with
// O_EXCL | O_NOFOLLOW, so nothing planted there is followed) and renamed into place (which replaces a planted
// symlink instead of writing through it); files that grow by appends (statistic.csv, mapping.csv) are kept in
// memory and replaced the same way, so a full or vanishing disk leaves the previous complete version or
// nothing, never a cut file. Directories below the root the user named are created by this process or checked
// to be real directories of this user, so another user who pre-creates the next directory of a predictable
// dump tree, or plants a symlink there, gets an error (the file is lost and counted) instead of our files; they
// are then held open (directory_handles.h) and files are created and renamed relative to them, so swapping a
// directory for a symlink later does not send files elsewhere.
#ifndef NPU_BRIDGE_OPS_RUNTIME_ATOMIC_FILES_H_
#define NPU_BRIDGE_OPS_RUNTIME_ATOMIC_FILES_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ops/runtime/directory_handles.h"

namespace npu_bridge {

// A slice of bytes of a file being written.
struct Piece {
  const char* data;
  size_t size;
};

// The modes of new files and directories (Python decides them: NPU_BRIDGE_DATA_MODE, owner-only by default;
// the umask applies on top). A negative value leaves that mode as it is.
void SetFileModes(int file_mode, int directory_mode);

// Makes `dir` exist. `root` is the directory the user named (dump_path, the exception dump base): it and its
// parents are taken as they are (created as by mkdir -p when missing). Every directory between `root` and `dir`
// is created here, or, when it exists, must be a real directory (not a symlink) owned by this effective user;
// otherwise the error (FailedPrecondition) names it and says why. `dir` must be `root` or below it. The
// directories are held open from then on (see OpenDirectory).
absl::Status EnsureDirectory(const std::string& root, const std::string& dir);

// Writes the pieces to a new file dir/.tmp.{random}.{name} and renames it to dir/name (whatever was there,
// a symlink included, is replaced), both relative to the held directory. On failure the temporary file is
// removed. `root` as for EnsureDirectory; a held directory that was removed is made again.
absl::Status WriteFileAtomically(const std::string& root, const std::string& dir, const std::string& name,
                                 const std::vector<Piece>& pieces);

// Text files that grow by appended rows. Appends only change memory; WriteDirty replaces each changed file
// atomically. A file that cannot be written stays in memory and is retried by the next WriteDirty, until the
// memory limit drops it (its rows are then lost, and reported as such).
class AppendedFiles {
 public:
  struct Failure {
    std::string dir, path, message;
    bool dropped;  // the rows were given up (memory limit); otherwise they are retried
  };

  // Adds `text` to dir/name (`dir` verified below `root` by EnsureDirectory); `header` (plus a newline) starts
  // the file when it is new. A file we wrote before and forgot is read back (only a regular file of ours).
  void Append(const std::string& root, const std::string& dir, const std::string& name, const std::string& header,
              const std::string& text);
  // Writes every file with rows not yet on disk. Returns the files that failed for the first time or were
  // dropped; `unwritten` receives every path whose rows are not all on disk.
  std::vector<Failure> WriteDirty(std::vector<std::string>* unwritten);
  bool dirty() const;

 private:
  struct File {
    std::string root, dir, name, content;
    bool dirty = false, failing = false;
    uint64_t last_append = 0;
  };
  void ForgetOldLocked();

  mutable std::mutex mu_;
  std::map<std::string, File> files_;  // by path
  uint64_t appends_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_ATOMIC_FILES_H_
