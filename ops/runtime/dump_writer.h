// The one asynchronous writer of every dump artifact of the process (data dump, statistics, overflow records,
// golden .npy files). Kernels hand it records that reference their tensors' buffers (no copy); worker
// threads write the files. Memory is bounded: when the queued tensors exceed the limit, Submit blocks, so a
// slow disk slows training down instead of growing memory. Python reaches it through the extern "C"
// functions at the end of dump_writer.cc (flush, status, overflow events, configuration).
//
// A file that cannot be written (full or vanishing disk) is counted as lost, by directory, and training goes
// on; an overflow record is listed for Python whether or not its files could be written, so the overflow
// signal never depends on the disk.
#ifndef NPU_BRIDGE_OPS_DUMP_WRITER_H_
#define NPU_BRIDGE_OPS_DUMP_WRITER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/runtime/atomic_files.h"
#include "ops/runtime/dump_format.h"

namespace npu_bridge {

struct DumpRecord {
  // Directory of the files, created on demand below `root`, the directory the user named (dump_path, the
  // exception dump base): directories between them are ours or refused (see EnsureDirectory).
  std::string root, dir;
  std::string op_type, op_name;  // as in the graph (file names sanitize them)
  int64_t task_id = 0;
  int64_t stream_id = 0;
  uint64_t timestamp = 0;  // from NextDumpTimestamp(); names the dump file
  std::vector<DumpTensor> inputs, outputs;
  bool dump_file = true;  // write the Ascend dump file
  bool golden = false;    // also write {op_name}.{output_index}.{timestamp}.npy per output
  bool stats = false;     // write rows of {dir}/statistic.csv instead of any tensor file
  // Overflow records (enable_dump_debug) add an Opdebug file next to the dump file.
  bool overflow = false;
  int64_t model_id = 0;
  int64_t step = 0;
  uint64_t overflow_status = 0;
  uint64_t opdebug_timestamp = 0;
};

// Microseconds since the epoch, strictly increasing within the process, so timestamps order records by
// execution and file names never collide.
uint64_t NextDumpTimestamp();

class DumpWriter {
 public:
  static DumpWriter& Get();

  // Queues a record for the worker threads; blocks while the queued tensors exceed the memory limit.
  void Submit(DumpRecord record);
  // Writes a record on the calling thread; returns the dump file's path (the first error when a file is lost).
  absl::StatusOr<std::string> WriteNow(const DumpRecord& record);
  // Waits until every submitted record is written, appended files included.
  void Flush();
  // Non-positive limits, and negative modes, leave the setting as it is.
  void Configure(int64_t queue_limit_bytes, int threads, int file_mode, int directory_mode);

  std::string StatusJson();
  std::string OverflowEventsJson(int64_t start);
  uint64_t changes() const;

 private:
  struct OverflowEvent {
    std::string opdebug_path, dump_path, op_name, op_type, dir;
    int64_t model_id, step, task_id;
    uint64_t status, timestamp;
  };

  DumpWriter() = default;
  // What writing one record did.
  struct Tally {
    int64_t files = 0, bytes = 0, lost = 0;
    absl::Status error;  // the first failure
    void Add(const absl::Status& status, int64_t file_bytes);
  };

  void StartLocked();
  void WorkerLoop();
  absl::StatusOr<std::string> Write(const DumpRecord& record);
  std::string WriteFiles(const DumpRecord& record, Tally* tally, std::string* opdebug_path);
  void WriteAppendedFiles();
  void Account(const std::string& dir, const Tally& tally);
  void RecordOverflow(OverflowEvent event);

  mutable std::mutex mu_;
  std::condition_variable work_ready_, space_free_, idle_;
  std::deque<DumpRecord> queue_;
  int64_t queued_bytes_ = 0;
  int64_t queue_limit_bytes_ = 256ll << 20;
  int threads_wanted_ = 2;
  int threads_started_ = 0;
  int active_ = 0;
  // Progress and problems, for Python.
  int64_t files_written_ = 0;
  int64_t bytes_written_ = 0;
  int64_t files_lost_ = 0;
  int64_t error_count_ = 0;          // records or appended files that lost something
  std::vector<std::string> errors_;  // the first few messages
  std::string last_error_;
  std::map<std::string, int64_t> lost_by_dir_;  // bounded; further directories only count
  int64_t lost_dirs_dropped_ = 0;
  AppendedFiles appended_;              // statistic.csv and mapping.csv
  std::vector<std::string> unwritten_;  // appended files whose rows are not all on disk (last attempt)
  std::vector<OverflowEvent> overflow_events_;
  int64_t overflow_events_dropped_ = 0;
  uint64_t changes_ = 0;  // bumped by every error, and by every overflow record queued and written
};

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_DUMP_WRITER_H_
