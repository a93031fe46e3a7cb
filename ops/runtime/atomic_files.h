// Files that readers never see half-written. Every dump artifact goes through here: whole files are written
// to a hidden temporary name and renamed, and files that grow by appends (statistic.csv, mapping.csv) are kept
// in memory and replaced the same way, so a full or vanishing disk leaves the previous complete version or
// nothing, never a cut file.
#ifndef NPU_BRIDGE_OPS_RUNTIME_ATOMIC_FILES_H_
#define NPU_BRIDGE_OPS_RUNTIME_ATOMIC_FILES_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace npu_bridge {

// A slice of bytes of a file being written.
struct Piece {
  const char* data;
  size_t size;
};

// mkdir -p, remembering directories that exist; `recheck` forgets that (someone removed the directory).
absl::Status EnsureDirectory(const std::string& dir, bool recheck = false);

// Writes the pieces to dir/.tmp.{name} and renames it to dir/name. On failure the temporary file is removed.
absl::Status WriteFileAtomically(const std::string& dir, const std::string& name, const std::vector<Piece>& pieces);

// Text files that grow by appended rows. Appends only change memory; WriteDirty replaces each changed file
// atomically. A file that cannot be written stays in memory and is retried by the next WriteDirty, until the
// memory limit drops it (its rows are then lost, and reported as such).
class AppendedFiles {
 public:
  struct Failure {
    std::string dir, path, message;
    bool dropped;  // the rows were given up (memory limit); otherwise they are retried
  };

  // Adds `text` to dir/name; `header` (plus a newline) starts the file when it is new.
  void Append(const std::string& dir, const std::string& name, const std::string& header, const std::string& text);
  // Writes every file with rows not yet on disk. Returns the files that failed for the first time or were
  // dropped; `unwritten` receives every path whose rows are not all on disk.
  std::vector<Failure> WriteDirty(std::vector<std::string>* unwritten);
  bool dirty() const;

 private:
  struct File {
    std::string dir, name, content;
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
