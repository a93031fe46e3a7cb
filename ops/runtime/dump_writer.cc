#include "ops/runtime/dump_writer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

#include "ops/runtime/c_api.h"
#include "ops/runtime/dump_layout.h"
#include "ops/runtime/json_text.h"
#include "ops/runtime/no_throw.h"
#include "ops/runtime/tensor_stats.h"

namespace npu_bridge {
namespace {

constexpr size_t kMaxErrorMessages = 20;
constexpr size_t kMaxOverflowEvents = 100000;
constexpr size_t kMaxLostDirs = 10000;
// How long the writer waits, idle, before putting rows appended to statistic.csv / mapping.csv on disk.
constexpr auto kAppendedFilesDelay = std::chrono::milliseconds(100);

// Returns `name`, or its digit replacement recorded in dir/mapping.csv when it is too long for a file name.
std::string FileNameFor(AppendedFiles* appended, const DumpRecord& r, const std::string& name,
                        const std::string& suffix) {
  if (name.size() + suffix.size() <= kMaxFileNameLength) return name + suffix;
  const std::string short_name = ShortFileName(name, suffix);
  appended->Append(r.root, r.dir, kMappingFile, "", short_name + "," + name + suffix + "\n");
  return short_name;
}

std::string ShapeText(const tensorflow::TensorShape& shape) {
  std::string text = "\"[";
  for (int i = 0; i < shape.dims(); ++i) text += (i ? "," : "") + std::to_string(shape.dim_size(i));
  return text + "]\"";
}

const char* FormatName(int format) {
  switch (format) {
    case kFormatNCHW:
      return "NCHW";
    case kFormatNHWC:
      return "NHWC";
    default:
      return "ND";
  }
}

std::string StatsRows(const DumpRecord& r) {
  std::string rows;
  const std::string prefix = r.op_type + "," + r.op_name + "," + std::to_string(r.task_id) + "," +
                             std::to_string(r.stream_id) + "," + std::to_string(r.timestamp) + ",";
  auto add = [&](const char* io, const std::vector<DumpTensor>& tensors) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      const DumpTensor& t = tensors[i];
      const TensorStats stats = t.has_data ? ComputeStats(t.tensor) : TensorStats();
      rows += prefix + io + "," + std::to_string(i) + "," + std::to_string(t.has_data ? t.tensor.TotalBytes() : 0) +
              "," + AscendDataTypeName(t.dtype) + "," + FormatName(t.format) + "," + ShapeText(t.shape) + "," +
              StatsCsvCells(stats, t.dtype) + "\n";
    }
  };
  add("input", r.inputs);
  add("output", r.outputs);
  return rows;
}

uint64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t RecordBytes(const DumpRecord& r) {
  int64_t bytes = 0;
  for (const auto* list : {&r.inputs, &r.outputs}) {
    for (const DumpTensor& t : *list) bytes += t.has_data ? t.tensor.TotalBytes() : 0;
  }
  return bytes;
}

}  // namespace

uint64_t NextDumpTimestamp() {
  static std::atomic<uint64_t> last{0};
  uint64_t previous = last.load(std::memory_order_relaxed);
  uint64_t next;
  do {
    next = std::max(NowMicros(), previous + 1);
  } while (!last.compare_exchange_weak(previous, next, std::memory_order_relaxed));
  return next;
}

DumpWriter& DumpWriter::Get() {
  static DumpWriter* writer = new DumpWriter();  // never destroyed: kernels may run during exit
  return *writer;
}

void DumpWriter::Configure(int64_t queue_limit_bytes, int threads, int file_mode, int directory_mode) {
  SetFileModes(file_mode, directory_mode);
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_limit_bytes > 0) queue_limit_bytes_ = queue_limit_bytes;
  if (threads > 0) threads_wanted_ = threads;
  space_free_.notify_all();
}

void DumpWriter::StartLocked() {
  while (threads_started_ < threads_wanted_) {
    std::thread([this] { WorkerLoop(); }).detach();
    ++threads_started_;
  }
}

void DumpWriter::Submit(DumpRecord record) {
  const int64_t bytes = RecordBytes(record);
  std::unique_lock<std::mutex> lock(mu_);
  StartLocked();
  // A record larger than the limit still goes through, alone.
  space_free_.wait(lock, [&] { return queued_bytes_ == 0 || queued_bytes_ + bytes <= queue_limit_bytes_; });
  queued_bytes_ += bytes;
  // Python learns at the end of the run that an overflow record is on its way (it waits for the writer before
  // naming the first overflowing op, so a record written late cannot be passed over).
  if (record.overflow) ++changes_;
  queue_.push_back(std::move(record));
  work_ready_.notify_one();
}

void DumpWriter::WorkerLoop() {
  while (true) {
    DumpRecord record;
    {
      std::unique_lock<std::mutex> lock(mu_);
      const auto has_work = [&] { return !queue_.empty(); };
      if (!work_ready_.wait_for(lock, kAppendedFilesDelay, has_work)) {
        if (appended_.dirty()) {
          lock.unlock();
          (void)NoThrow("the dump writer", [&] {
            WriteAppendedFiles();
            return absl::OkStatus();
          });
          continue;
        }
        work_ready_.wait(lock, has_work);
      }
      record = std::move(queue_.front());
      queue_.pop_front();
      ++active_;
    }
    const int64_t bytes = RecordBytes(record);
    // The dump of a record that cannot be written is lost (and counted); the thread goes on with the next.
    (void)NoThrow("the dump writer", [&] { return Write(record).status(); });
    record = DumpRecord();  // release the tensors before the memory is accounted free
    std::lock_guard<std::mutex> lock(mu_);
    queued_bytes_ -= bytes;
    --active_;
    space_free_.notify_all();
    if (queue_.empty() && active_ == 0) idle_.notify_all();
  }
}

void DumpWriter::Flush() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return queue_.empty() && active_ == 0; });
  }
  WriteAppendedFiles();
}

absl::StatusOr<std::string> DumpWriter::WriteNow(const DumpRecord& record) {
  absl::StatusOr<std::string> written = Write(record);
  WriteAppendedFiles();
  return written;
}

void DumpWriter::Tally::Add(const absl::Status& status, int64_t file_bytes) {
  if (status.ok()) {
    ++files;
    bytes += file_bytes;
    return;
  }
  ++lost;
  if (error.ok()) error = status;
}

absl::StatusOr<std::string> DumpWriter::Write(const DumpRecord& r) {
  Tally tally;
  std::string opdebug_path, dump_path;
  const absl::Status directory = EnsureDirectory(r.root, r.dir);
  if (directory.ok()) {
    dump_path = WriteFiles(r, &tally, &opdebug_path);
  } else {
    int64_t expected = (r.dump_file && !r.stats) + r.overflow;
    for (const DumpTensor& t : r.outputs) expected += r.golden && !r.stats && t.has_data;
    for (int64_t i = 0; i < expected; ++i) tally.Add(directory, 0);
    if (r.stats) tally.Add(directory, 0);
  }
  if (r.overflow) {
    RecordOverflow({opdebug_path, dump_path, r.op_name, r.op_type, r.dir, r.model_id, r.step, r.task_id,
                    r.overflow_status, r.opdebug_timestamp});
  }
  Account(r.dir, tally);
  if (!tally.error.ok()) return tally.error;
  return dump_path;
}

// Writes the files of a record (each one on its own: a lost file does not stop the others). Returns the dump
// file's path, empty when it was lost or none is written; `opdebug_path` likewise.
std::string DumpWriter::WriteFiles(const DumpRecord& r, Tally* tally, std::string* opdebug_path) {
  std::string dump_path;
  if (r.stats) {
    appended_.Append(r.root, r.dir, kStatisticsFile, kStatsCsvHeader, StatsRows(r));
    dump_path = DumpFilePath(r.dir, kStatisticsFile);
  } else if (r.dump_file) {
    const std::string header = EncodeDumpHeader(r.op_name, r.timestamp / 1000, r.inputs, r.outputs);
    uint64_t header_size = header.size();  // little-endian on every platform TensorFlow builds for
    std::vector<Piece> pieces = {{reinterpret_cast<const char*>(&header_size), 8}, {header.data(), header.size()}};
    int64_t bytes = 0;
    for (const auto* list : {&r.inputs, &r.outputs}) {
      for (const DumpTensor& t : *list) {
        if (t.has_data) pieces.push_back({t.tensor.tensor_data().data(), t.tensor.tensor_data().size()});
      }
    }
    for (const Piece& p : pieces) bytes += p.size;
    const std::string name =
        FileNameFor(&appended_, r, DumpFileName(r.op_type, r.op_name, r.task_id, r.stream_id, r.timestamp), "");
    const absl::Status status = WriteFileAtomically(r.root, r.dir, name, pieces);
    tally->Add(status, bytes);
    if (status.ok()) dump_path = DumpFilePath(r.dir, name);
  }
  if (r.golden && !r.stats) {
    for (size_t i = 0; i < r.outputs.size(); ++i) {
      const DumpTensor& t = r.outputs[i];
      if (!t.has_data) continue;
      tensorflow::Tensor data = t.tensor;
      if (NpyNeedsWidening(t.dtype)) {
        data = tensorflow::Tensor(tensorflow::DT_FLOAT, t.tensor.shape());
        auto source = t.tensor.flat<Eigen::bfloat16>();
        auto target = data.flat<float>();
        for (int64_t k = 0; k < source.size(); ++k) target(k) = static_cast<float>(source(k));
      }
      const std::string header = NpyHeader(t.dtype, t.shape);
      const std::string name = FileNameFor(&appended_, r, GoldenFileStem(r.op_name, i, r.timestamp), ".npy");
      tally->Add(
          WriteFileAtomically(r.root, r.dir, name,
                              {{header.data(), header.size()}, {data.tensor_data().data(), data.tensor_data().size()}}),
          header.size() + data.tensor_data().size());
    }
  }
  if (r.overflow) {
    const std::string header = EncodeOpdebugHeader(r.opdebug_timestamp / 1000);
    const std::string payload = OverflowPayload(r.model_id, r.stream_id, r.task_id, r.overflow_status);
    uint64_t header_size = header.size();
    const std::string name = OpdebugFileName(r.task_id, r.stream_id, r.opdebug_timestamp);
    const absl::Status status = WriteFileAtomically(r.root, r.dir, name,
                                                    {{reinterpret_cast<const char*>(&header_size), 8},
                                                     {header.data(), header.size()},
                                                     {payload.data(), payload.size()}});
    tally->Add(status, 8 + header.size() + payload.size());
    if (status.ok()) *opdebug_path = DumpFilePath(r.dir, name);
  }
  return dump_path;
}

// Puts the rows appended to statistic.csv / mapping.csv on disk; failures are counted like lost files.
void DumpWriter::WriteAppendedFiles() {
  std::vector<std::string> unwritten;
  const std::vector<AppendedFiles::Failure> failures = appended_.WriteDirty(&unwritten);
  for (const AppendedFiles::Failure& failure : failures) {
    Tally tally;
    tally.Add(absl::InternalError(failure.message), 0);
    if (!failure.dropped) tally.lost = 0;  // retried later; counted below while it stays unwritten
    Account(failure.dir, tally);
  }
  std::lock_guard<std::mutex> lock(mu_);
  unwritten_ = std::move(unwritten);
}

void DumpWriter::Account(const std::string& dir, const Tally& tally) {
  std::lock_guard<std::mutex> lock(mu_);
  files_written_ += tally.files;
  bytes_written_ += tally.bytes;
  if (tally.error.ok()) return;
  ++error_count_;
  ++changes_;
  last_error_ = std::string(tally.error.message());
  if (errors_.size() < kMaxErrorMessages) errors_.push_back(last_error_);
  if (!tally.lost) return;
  files_lost_ += tally.lost;
  auto found = lost_by_dir_.find(dir);
  if (found != lost_by_dir_.end()) {
    found->second += tally.lost;
  } else if (lost_by_dir_.size() < kMaxLostDirs) {
    lost_by_dir_[dir] = tally.lost;
  } else {
    ++lost_dirs_dropped_;
  }
}

void DumpWriter::RecordOverflow(OverflowEvent event) {
  std::lock_guard<std::mutex> lock(mu_);
  ++changes_;
  if (overflow_events_.size() < kMaxOverflowEvents) {
    overflow_events_.push_back(std::move(event));
  } else {
    ++overflow_events_dropped_;
  }
}

uint64_t DumpWriter::changes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return changes_;
}

std::string DumpWriter::StatusJson() {
  std::lock_guard<std::mutex> lock(mu_);
  auto list = [](const std::vector<std::string>& items) {
    std::string json = "[";
    for (size_t i = 0; i < items.size(); ++i) json += (i ? "," : "") + JsonQuote(items[i]);
    return json + "]";
  };
  std::string lost_dirs = "{";
  for (const auto& [dir, count] : lost_by_dir_) {
    lost_dirs += (lost_dirs.size() > 1 ? "," : "") + JsonQuote(dir) + ":" + std::to_string(count);
  }
  return "{\"files_written\":" + std::to_string(files_written_) +
         ",\"bytes_written\":" + std::to_string(bytes_written_) + ",\"files_lost\":" + std::to_string(files_lost_) +
         ",\"lost_dirs\":" + lost_dirs + "},\"lost_dirs_dropped\":" + std::to_string(lost_dirs_dropped_) +
         ",\"unwritten_files\":" + list(unwritten_) + ",\"queued_bytes\":" + std::to_string(queued_bytes_) +
         ",\"queue_limit_bytes\":" + std::to_string(queue_limit_bytes_) +
         ",\"threads\":" + std::to_string(threads_wanted_) + ",\"error_count\":" + std::to_string(error_count_) +
         ",\"errors\":" + list(errors_) + ",\"last_error\":" + JsonQuote(last_error_) +
         ",\"overflow_events\":" + std::to_string(overflow_events_.size()) +
         ",\"overflow_events_dropped\":" + std::to_string(overflow_events_dropped_) +
         ",\"changes\":" + std::to_string(changes_) + "}";
}

std::string DumpWriter::OverflowEventsJson(int64_t start) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string json = "[";
  for (size_t i = std::max<int64_t>(start, 0); i < overflow_events_.size(); ++i) {
    const OverflowEvent& e = overflow_events_[i];
    if (json.size() > 1) json += ",";
    json += "{\"opdebug\":" + JsonQuote(e.opdebug_path) + ",\"dump\":" + JsonQuote(e.dump_path) +
            ",\"dir\":" + JsonQuote(e.dir) + ",\"op_name\":" + JsonQuote(e.op_name) +
            ",\"op_type\":" + JsonQuote(e.op_type) + ",\"model_id\":" + std::to_string(e.model_id) +
            ",\"step\":" + std::to_string(e.step) + ",\"task_id\":" + std::to_string(e.task_id) +
            ",\"status\":" + std::to_string(e.status) + ",\"timestamp\":" + std::to_string(e.timestamp) + "}";
  }
  return json + "]";
}

}  // namespace npu_bridge

extern "C" {

void npu_bridge_dump_flush() {
  npu_bridge::NoThrowValue(0, [] {
    npu_bridge::DumpWriter::Get().Flush();
    return 0;
  });
}

// The queue limit, thread count and the modes of new files and directories (Python reads and validates
// NPU_BRIDGE_DUMP_QUEUE_MB, NPU_BRIDGE_DUMP_THREADS and NPU_BRIDGE_DATA_MODE).
void npu_bridge_dump_configure(int64_t queue_limit_bytes, int threads, int file_mode, int directory_mode) {
  npu_bridge::NoThrowValue(0, [&] {
    npu_bridge::DumpWriter::Get().Configure(queue_limit_bytes, threads, file_mode, directory_mode);
    return 0;
  });
}

// It cannot throw (an atomic load).
uint64_t npu_bridge_dump_changes() { return npu_bridge::DumpWriter::Get().changes(); }

size_t npu_bridge_dump_status_json(char* buf, size_t len) {
  return npu_bridge::NoThrowValue<size_t>(
      0, [&] { return npu_bridge::CopyToBuffer(npu_bridge::DumpWriter::Get().StatusJson(), buf, len); });
}

size_t npu_bridge_dump_overflow_events_json(int64_t start, char* buf, size_t len) {
  return npu_bridge::NoThrowValue<size_t>(
      0, [&] { return npu_bridge::CopyToBuffer(npu_bridge::DumpWriter::Get().OverflowEventsJson(start), buf, len); });
}

}  // extern "C"
