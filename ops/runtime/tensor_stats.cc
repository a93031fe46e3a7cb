#include "ops/runtime/tensor_stats.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace npu_bridge {
namespace {

template <typename T>
TensorStats Accumulate(const tensorflow::Tensor& tensor) {
  TensorStats s;
  s.numeric = true;
  const auto values = tensor.flat<T>();
  s.count = values.size();
  double max = -std::numeric_limits<double>::infinity(), min = std::numeric_limits<double>::infinity();
  double sum = 0, squares = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < values.size(); ++i) {
    const double v = static_cast<double>(values(i));
    if (std::isnan(v)) {
      ++s.nan;
    } else if (std::isinf(v)) {
      ++(v > 0 ? s.positive_inf : s.negative_inf);
    } else {
      ++finite;
      if (v < 0)
        ++s.negative;
      else if (v > 0)
        ++s.positive;
      else
        ++s.zero;
      max = std::max(max, v);
      min = std::min(min, v);
      sum += v;
      squares += v * v;
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.max = finite ? max : nan;
  s.min = finite ? min : nan;
  s.mean = finite ? sum / finite : nan;
  s.l2norm = finite ? std::sqrt(squares) : nan;
  return s;
}

std::string Number(double value, int digits) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

}  // namespace

TensorStats ComputeStats(const tensorflow::Tensor& tensor) {
  switch (tensor.dtype()) {
    case tensorflow::DT_FLOAT:
      return Accumulate<float>(tensor);
    case tensorflow::DT_HALF:
      return Accumulate<Eigen::half>(tensor);
    case tensorflow::DT_BFLOAT16:
      return Accumulate<Eigen::bfloat16>(tensor);
    case tensorflow::DT_DOUBLE:
      return Accumulate<double>(tensor);
    case tensorflow::DT_INT8:
      return Accumulate<int8_t>(tensor);
    case tensorflow::DT_UINT8:
      return Accumulate<uint8_t>(tensor);
    case tensorflow::DT_INT16:
      return Accumulate<int16_t>(tensor);
    case tensorflow::DT_UINT16:
      return Accumulate<uint16_t>(tensor);
    case tensorflow::DT_INT32:
      return Accumulate<int32_t>(tensor);
    case tensorflow::DT_UINT32:
      return Accumulate<uint32_t>(tensor);
    case tensorflow::DT_INT64:
      return Accumulate<int64_t>(tensor);
    case tensorflow::DT_UINT64:
      return Accumulate<uint64_t>(tensor);
    case tensorflow::DT_BOOL:
      return Accumulate<bool>(tensor);
    default:
      return TensorStats();
  }
}

const char kStatsCsvHeader[] =
    "Op Type,Op Name,Task ID,Stream ID,Timestamp,Input/Output,Slot,Data Size,Data Type,Format,Shape,"
    "Max Value,Min Value,Avg Value,Count,Negative Zero Count,Positive Zero Count,NaN Count,"
    "Negative Inf Count,Positive Inf Count,Zero Count,L2Norm Value";

std::string StatsCsvCells(const TensorStats& s, tensorflow::DataType dtype) {
  if (!s.numeric) return ",,,,,,,,,,";
  const int digits = dtype == tensorflow::DT_DOUBLE ? 17 : 9;
  return Number(s.max, digits) + "," + Number(s.min, digits) + "," + Number(s.mean, digits) + "," +
         std::to_string(s.count) + "," + std::to_string(s.negative) + "," + std::to_string(s.positive) + "," +
         std::to_string(s.nan) + "," + std::to_string(s.negative_inf) + "," + std::to_string(s.positive_inf) + "," +
         std::to_string(s.zero) + "," + Number(s.l2norm, digits);
}

}  // namespace npu_bridge
