// Element-wise reductions of the shared-memory collectives. Integers wrap (computed unsigned, as TensorFlow's
// two's-complement results); half and bfloat16 are combined in float and rounded once per element.
#include "ops/runtime/shm_reduce.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "tensorflow/core/framework/numeric_types.h"

namespace npu_bridge {
namespace shm {

namespace {

constexpr size_t kBlockBytes = 32 * 1024;  // the output block stays in cache while every source is folded in

template <typename T>
struct Wide {
  using type = T;
};
template <>
struct Wide<Eigen::half> {
  using type = float;
};
template <>
struct Wide<Eigen::bfloat16> {
  using type = float;
};
template <>
struct Wide<int32_t> {
  using type = uint32_t;
};
template <>
struct Wide<int64_t> {
  using type = uint64_t;
};

template <typename W>
W Combine(Reduction reduction, W a, W b) {
  switch (reduction) {
    case kSum:
      return a + b;
    case kProd:
      return a * b;
    case kMax:
      return a > b ? a : b;
    default:
      return a < b ? a : b;
  }
}

// Max / min of integers compare signed values; the unsigned wide type is only for sum and product.
template <typename T>
T CombineElement(Reduction reduction, T a, T b) {
  using W = typename Wide<T>::type;
  if (std::is_integral<T>::value && (reduction == kMax || reduction == kMin)) return Combine<T>(reduction, a, b);
  return static_cast<T>(Combine<W>(reduction, static_cast<W>(a), static_cast<W>(b)));
}

template <typename T, Reduction R>
void FoldBlock(const T* __restrict a, const T* __restrict b, T* __restrict out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = CombineElement<T>(R, a[i], b[i]);
}

template <typename T, Reduction R>
void FoldInto(const T* __restrict source, T* __restrict out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = CombineElement<T>(R, out[i], source[i]);
}

template <typename T, Reduction R>
void ReduceTyped(const char* const* sources, int n, char* out, size_t bytes) {
  const size_t count = bytes / sizeof(T);
  const size_t block = kBlockBytes / sizeof(T);
  T* target = reinterpret_cast<T*>(out);
  for (size_t start = 0; start < count; start += block) {
    const size_t len = std::min(block, count - start);
    const T* first = reinterpret_cast<const T*>(sources[0]) + start;
    if (n == 1) {
      std::copy(first, first + len, target + start);
      continue;
    }
    FoldBlock<T, R>(first, reinterpret_cast<const T*>(sources[1]) + start, target + start, len);
    for (int k = 2; k < n; ++k) FoldInto<T, R>(reinterpret_cast<const T*>(sources[k]) + start, target + start, len);
  }
}

// Half and bfloat16: every source widened to float, folded, rounded once.
template <typename T>
void ReduceNarrow(Reduction reduction, const char* const* sources, int n, char* out, size_t bytes) {
  constexpr size_t kBlock = 1024;
  float wide[kBlock];
  const size_t count = bytes / sizeof(T);
  T* target = reinterpret_cast<T*>(out);
  for (size_t start = 0; start < count; start += kBlock) {
    const size_t len = std::min(kBlock, count - start);
    const T* first = reinterpret_cast<const T*>(sources[0]) + start;
    for (size_t i = 0; i < len; ++i) wide[i] = static_cast<float>(first[i]);
    for (int k = 1; k < n; ++k) {
      const T* source = reinterpret_cast<const T*>(sources[k]) + start;
      for (size_t i = 0; i < len; ++i) wide[i] = Combine<float>(reduction, wide[i], static_cast<float>(source[i]));
    }
    for (size_t i = 0; i < len; ++i) target[start + i] = static_cast<T>(wide[i]);
  }
}

template <typename T>
void ReduceWith(Reduction reduction, const char* const* sources, int n, char* out, size_t bytes) {
  switch (reduction) {
    case kSum:
      return ReduceTyped<T, kSum>(sources, n, out, bytes);
    case kProd:
      return ReduceTyped<T, kProd>(sources, n, out, bytes);
    case kMax:
      return ReduceTyped<T, kMax>(sources, n, out, bytes);
    default:
      return ReduceTyped<T, kMin>(sources, n, out, bytes);
  }
}

}  // namespace

absl::Status ParseReduction(const std::string& name, Reduction* reduction) {
  if (name == "sum") {
    *reduction = kSum;
  } else if (name == "prod") {
    *reduction = kProd;
  } else if (name == "max") {
    *reduction = kMax;
  } else if (name == "min") {
    *reduction = kMin;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("reduction '", name, "' is not one of 'sum', 'prod', 'max', 'min'"));
  }
  return absl::OkStatus();
}

bool IsReducible(tensorflow::DataType dtype) {
  switch (dtype) {
    case tensorflow::DT_FLOAT:
    case tensorflow::DT_DOUBLE:
    case tensorflow::DT_HALF:
    case tensorflow::DT_BFLOAT16:
    case tensorflow::DT_INT32:
    case tensorflow::DT_INT64:
      return true;
    default:
      return false;
  }
}

void Reduce(tensorflow::DataType dtype, Reduction reduction, const char* const* sources, int n, char* out,
            size_t bytes) {
  switch (dtype) {
    case tensorflow::DT_FLOAT:
      return ReduceWith<float>(reduction, sources, n, out, bytes);
    case tensorflow::DT_DOUBLE:
      return ReduceWith<double>(reduction, sources, n, out, bytes);
    case tensorflow::DT_INT32:
      return ReduceWith<int32_t>(reduction, sources, n, out, bytes);
    case tensorflow::DT_INT64:
      return ReduceWith<int64_t>(reduction, sources, n, out, bytes);
    case tensorflow::DT_HALF:
      return ReduceNarrow<Eigen::half>(reduction, sources, n, out, bytes);
    case tensorflow::DT_BFLOAT16:
      return ReduceNarrow<Eigen::bfloat16>(reduction, sources, n, out, bytes);
    default:
      return;
  }
}

}  // namespace shm
}  // namespace npu_bridge
