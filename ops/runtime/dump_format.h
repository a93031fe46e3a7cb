// Ascend's dump artifacts, byte for byte: the "big dump" v2 file (8-byte little-endian header length, a
// toolkit.dumpdata.DumpData protobuf header whose data fields are empty, then the raw tensor bytes), the
// Opdebug overflow payload, golden .npy files and file names. Encoded by hand (protobuf wire format) so the
// library needs no generated code; npu_bridge/core/dump/dump_proto.py declares the same schema for reading.
#ifndef NPU_BRIDGE_OPS_DUMP_FORMAT_H_
#define NPU_BRIDGE_OPS_DUMP_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/types.h"

namespace npu_bridge {

// Ascend's OutputFormat values used here; tensors keep TensorFlow's layout.
constexpr int kFormatNCHW = 0;
constexpr int kFormatNHWC = 1;
constexpr int kFormatND = 2;

// Size of the overflow block in an Opdebug file (Ascend's OVERFLOW_CHECK_SIZE).
constexpr size_t kOverflowPayloadSize = 2048;

// Status bits of the AI Core status word in our Opdebug records.
constexpr uint64_t kOverflowNaN = 0x1;
constexpr uint64_t kOverflowInf = 0x2;
constexpr uint64_t kOverflowFp16Saturated = 0x4;

// One input or output of a dumped op.
struct DumpTensor {
  tensorflow::Tensor tensor;  // shares the buffer (or holds a copy); empty when !has_data
  tensorflow::DataType dtype = tensorflow::DT_INVALID;
  tensorflow::TensorShape shape;
  int format = kFormatND;
  bool has_data = false;  // false for strings, resources and variants: listed with size 0
};

// A DumpTensor sharing `tensor`'s buffer. 4-D tensors of ops with a data_format attr ("NHWC"/"NCHW") carry
// that format; everything else is ND.
DumpTensor MakeDumpTensor(const tensorflow::Tensor& tensor, const std::string& data_format);

// Ascend's DataType enum value of a TensorFlow dtype (0 = undefined).
int AscendDataType(tensorflow::DataType dtype);
// "DT_FLOAT", "DT_FLOAT16", ... (Ascend's names).
std::string AscendDataTypeName(tensorflow::DataType dtype);
// True when the tensor's bytes are dumped (fixed-size numeric types).
bool HasRawBytes(tensorflow::DataType dtype);

// The DumpData header (version "2.0", data fields empty, sizes set) of a v2 dump file.
std::string EncodeDumpHeader(const std::string& op_name, uint64_t dump_time_ms, const std::vector<DumpTensor>& inputs,
                             const std::vector<DumpTensor>& outputs);

// The DumpData header of an Opdebug file: op Node_OpDebug with one uint8 output of kOverflowPayloadSize.
std::string EncodeOpdebugHeader(uint64_t dump_time_ms);

// The overflow block: AI Core info {model_id, stream_id, task_id, task_type, pc_start, para_base} at byte 256,
// AI Core status {kernel_code, block_idx, status} at byte 1024, everything else zero.
std::string OverflowPayload(int64_t model_id, int64_t stream_id, int64_t task_id, uint64_t status);

// The .npy header for a tensor of `dtype` and `shape`; bfloat16 is written as float32 (see NpyNeedsWidening).
std::string NpyHeader(tensorflow::DataType dtype, const tensorflow::TensorShape& shape);
bool NpyNeedsWidening(tensorflow::DataType dtype);

// Ascend's name rule: '.', '/', '\' and ' ' become '_'.
std::string SanitizeName(const std::string& name);

// Ascend's file name limit; longer names are replaced by digits and listed in mapping.csv.
constexpr size_t kMaxFileNameLength = 255;
std::string ShortFileName(const std::string& long_name, const std::string& suffix);

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_DUMP_FORMAT_H_
