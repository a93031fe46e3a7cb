#include "ops/runtime/dump_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <unordered_set>
#include <utility>

#include "ops/runtime/json_text.h"
#include "ops/runtime/no_throw.h"
#include "ops/runtime/tensor_stats.h"

namespace npu_bridge {
namespace {

constexpr size_t kMaxErrorMessages = 20;
constexpr size_t kMaxOverflowEvents = 100000;
constexpr int kIovBatch = 512;

struct Piece {
  const char* data;
  size_t size;
};

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// mkdir -p, remembering directories that exist; `recheck` forgets that (someone removed the directory).
absl::Status EnsureDirectory(const std::string& dir, bool recheck = false) {
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

// Writes the pieces to a hidden temporary file and renames it, so readers never see a partial file.
absl::Status WriteFileAtomically(const std::string& dir, const std::string& name, const std::vector<Piece>& pieces) {
  const std::string path = dir + "/" + name;
  const std::string temporary = dir + "/.tmp." + name;
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT && EnsureDirectory(dir, /*recheck=*/true).ok()) {
    fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (fd < 0) return absl::InternalError(ErrnoText("cannot create", temporary));
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
      const absl::Status error = absl::InternalError(ErrnoText("cannot write", temporary));
      close(fd);
      unlink(temporary.c_str());
      return error;
    }
    size_t left = static_cast<size_t>(written);
    while (next < iov.size() && left >= iov[next].iov_len) left -= iov[next++].iov_len;
    if (left) {  // partial write: advance inside the current piece
      iov[next].iov_base = static_cast<char*>(iov[next].iov_base) + left;
      iov[next].iov_len -= left;
    }
  }
  if (close(fd) != 0) return absl::InternalError(ErrnoText("cannot close", temporary));
  if (rename(temporary.c_str(), path.c_str()) != 0) return absl::InternalError(ErrnoText("cannot rename", path));
  return absl::OkStatus();
}

// Appends `text` to dir/name, writing `header` first when the file is new.
absl::Status AppendText(const std::string& dir, const std::string& name, const std::string& header,
                        const std::string& text) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const std::string path = dir + "/" + name;
  const bool is_new = access(path.c_str(), F_OK) != 0;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(ErrnoText("cannot open", path));
  const std::string content = (is_new ? header + "\n" : std::string()) + text;
  const char* data = content.data();
  size_t left = content.size();
  while (left) {
    const ssize_t written = write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) {
      const absl::Status error = absl::InternalError(ErrnoText("cannot write", path));
      close(fd);
      return error;
    }
    data += written;
    left -= written;
  }
  close(fd);
  return absl::OkStatus();
}

// Returns `name`, or its digit replacement recorded in dir/mapping.csv when it is too long for a file name.
absl::StatusOr<std::string> FileNameFor(const std::string& dir, const std::string& name, const std::string& suffix) {
  if (name.size() + suffix.size() <= kMaxFileNameLength) return name + suffix;
  const std::string short_name = ShortFileName(name, suffix);
  absl::Status status = AppendText(dir, "mapping.csv", "", short_name + "," + name + suffix + "\n");
  if (!status.ok()) return status;
  return short_name;
}

std::string DumpFileName(const DumpRecord& r) {
  return SanitizeName(r.op_type) + "." + SanitizeName(r.op_name) + "." + std::to_string(r.task_id) + "." +
         std::to_string(r.stream_id) + "." + std::to_string(r.timestamp);
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

void DumpWriter::Configure(int64_t queue_limit_bytes, int threads) {
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
      work_ready_.wait(lock, [&] { return !queue_.empty(); });
      record = std::move(queue_.front());
      queue_.pop_front();
      ++active_;
    }
    const int64_t bytes = RecordBytes(record);
    absl::StatusOr<std::string> written = Write(record);
    if (!written.ok()) RecordError(std::string(written.status().message()));
    record = DumpRecord();  // release the tensors before the memory is accounted free
    std::lock_guard<std::mutex> lock(mu_);
    queued_bytes_ -= bytes;
    --active_;
    space_free_.notify_all();
    if (queue_.empty() && active_ == 0) idle_.notify_all();
  }
}

void DumpWriter::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return queue_.empty() && active_ == 0; });
}

absl::StatusOr<std::string> DumpWriter::WriteNow(const DumpRecord& record) {
  absl::StatusOr<std::string> written = Write(record);
  if (!written.ok()) RecordError(std::string(written.status().message()));
  return written;
}

absl::StatusOr<std::string> DumpWriter::Write(const DumpRecord& r) {
  absl::Status status = EnsureDirectory(r.dir);
  if (!status.ok()) return status;
  int64_t files = 0, bytes = 0;
  std::string dump_path;
  if (r.stats) {
    const std::string rows = StatsRows(r);
    status = AppendText(r.dir, "statistic.csv", kStatsCsvHeader, rows);
    if (!status.ok()) return status;
    bytes += rows.size();
    dump_path = r.dir + "/statistic.csv";
  } else if (r.dump_file) {
    const std::string header = EncodeDumpHeader(r.op_name, r.timestamp / 1000, r.inputs, r.outputs);
    uint64_t header_size = header.size();  // little-endian on every platform TensorFlow builds for
    std::vector<Piece> pieces = {{reinterpret_cast<const char*>(&header_size), 8}, {header.data(), header.size()}};
    for (const auto* list : {&r.inputs, &r.outputs}) {
      for (const DumpTensor& t : *list) {
        if (t.has_data) pieces.push_back({t.tensor.tensor_data().data(), t.tensor.tensor_data().size()});
      }
    }
    absl::StatusOr<std::string> name = FileNameFor(r.dir, DumpFileName(r), "");
    if (!name.ok()) return name.status();
    status = WriteFileAtomically(r.dir, *name, pieces);
    if (!status.ok()) return status;
    for (const Piece& p : pieces) bytes += p.size;
    ++files;
    dump_path = r.dir + "/" + *name;
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
      absl::StatusOr<std::string> name = FileNameFor(
          r.dir, SanitizeName(r.op_name) + "." + std::to_string(i) + "." + std::to_string(r.timestamp), ".npy");
      if (!name.ok()) return name.status();
      status = WriteFileAtomically(
          r.dir, *name, {{header.data(), header.size()}, {data.tensor_data().data(), data.tensor_data().size()}});
      if (!status.ok()) return status;
      bytes += header.size() + data.tensor_data().size();
      ++files;
    }
  }
  if (r.overflow) {
    const std::string header = EncodeOpdebugHeader(r.opdebug_timestamp / 1000);
    const std::string payload = OverflowPayload(r.model_id, r.stream_id, r.task_id, r.overflow_status);
    uint64_t header_size = header.size();
    const std::string name = "Opdebug.Node_OpDebug." + std::to_string(r.task_id) + "." + std::to_string(r.stream_id) +
                             "." + std::to_string(r.opdebug_timestamp);
    status = WriteFileAtomically(r.dir, name,
                                 {{reinterpret_cast<const char*>(&header_size), 8},
                                  {header.data(), header.size()},
                                  {payload.data(), payload.size()}});
    if (!status.ok()) return status;
    bytes += 8 + header.size() + payload.size();
    ++files;
    RecordOverflow({r.dir + "/" + name, dump_path, r.op_name, r.op_type, r.dir, r.model_id, r.step, r.task_id,
                    r.overflow_status, r.opdebug_timestamp});
  }
  std::lock_guard<std::mutex> lock(mu_);
  files_written_ += files;
  bytes_written_ += bytes;
  return dump_path;
}

void DumpWriter::RecordError(const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  ++error_count_;
  ++changes_;
  if (errors_.size() < kMaxErrorMessages) errors_.push_back(message);
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
  std::string errors = "[";
  for (size_t i = 0; i < errors_.size(); ++i) errors += (i ? "," : "") + JsonQuote(errors_[i]);
  return "{\"files_written\":" + std::to_string(files_written_) +
         ",\"bytes_written\":" + std::to_string(bytes_written_) + ",\"queued_bytes\":" + std::to_string(queued_bytes_) +
         ",\"queue_limit_bytes\":" + std::to_string(queue_limit_bytes_) +
         ",\"threads\":" + std::to_string(threads_wanted_) + ",\"error_count\":" + std::to_string(error_count_) +
         ",\"errors\":" + errors + "],\"overflow_events\":" + std::to_string(overflow_events_.size()) +
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

void npu_bridge_dump_configure(int64_t queue_limit_bytes, int threads) {
  npu_bridge::NoThrowValue(0, [&] {
    npu_bridge::DumpWriter::Get().Configure(queue_limit_bytes, threads);
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
