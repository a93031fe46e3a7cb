#include "ops/runtime/dump_format.h"

#include <cstdio>
#include <cstring>
#include <functional>

namespace npu_bridge {
namespace {

using tensorflow::DataType;

// Minimal protobuf wire-format writer: varints (wire type 0) and length-delimited fields (wire type 2).
class ProtoWriter {
 public:
  void Varint(int field, uint64_t value) {
    if (value == 0) return;  // proto3 leaves defaults out
    Key(field, 0);
    Raw(value);
  }
  void Bytes(int field, const std::string& value) {
    Key(field, 2);
    Raw(value.size());
    out_ += value;
  }
  void String(int field, const std::string& value) {
    if (!value.empty()) Bytes(field, value);
  }
  void Message(int field, const ProtoWriter& message) { Bytes(field, message.out_); }
  void PackedVarints(int field, const std::vector<uint64_t>& values) {
    if (values.empty()) return;
    ProtoWriter packed;
    for (uint64_t v : values) packed.Raw(v);
    Bytes(field, packed.out_);
  }
  const std::string& str() const { return out_; }

 private:
  void Key(int field, int wire_type) { Raw((static_cast<uint64_t>(field) << 3) | wire_type); }
  void Raw(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }
  std::string out_;
};

// message Shape { repeated uint64 dim = 1; }
ProtoWriter ShapeMessage(const DumpTensor& t) {
  std::vector<uint64_t> dims;
  for (int64_t d : t.shape.dim_sizes()) dims.push_back(static_cast<uint64_t>(d));
  ProtoWriter shape;
  shape.PackedVarints(1, dims);
  return shape;
}

uint64_t ByteSize(const DumpTensor& t) { return t.has_data ? t.tensor.TotalBytes() : 0; }

// OpOutput {data_type=1, format=2, shape=3, original_op=4, size=6, original_shape=7}
// OriginalOp {name=1, output_index=2, data_type=3, format=4}
std::string OutputMessage(const DumpTensor& t, const std::string& op_name, int index) {
  ProtoWriter original;
  original.String(1, op_name);
  original.Varint(2, static_cast<uint64_t>(index));
  original.Varint(3, AscendDataType(t.dtype));
  original.Varint(4, t.format);
  ProtoWriter out;
  out.Varint(1, AscendDataType(t.dtype));
  out.Varint(2, t.format);
  out.Message(3, ShapeMessage(t));
  out.Message(4, original);
  out.Varint(6, ByteSize(t));
  out.Message(7, ShapeMessage(t));
  return out.str();
}

// OpInput {data_type=1, format=2, shape=3, size=5, original_shape=6}
std::string InputMessage(const DumpTensor& t) {
  ProtoWriter in;
  in.Varint(1, AscendDataType(t.dtype));
  in.Varint(2, t.format);
  in.Message(3, ShapeMessage(t));
  in.Varint(5, ByteSize(t));
  in.Message(6, ShapeMessage(t));
  return in.str();
}

void PutU64(std::string* out, size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i) (*out)[offset + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

const char* NpyDescr(DataType dtype) {
  switch (dtype) {
    case tensorflow::DT_FLOAT:
      return "<f4";
    case tensorflow::DT_BFLOAT16:
      return "<f4";  // widened: numpy has no bfloat16
    case tensorflow::DT_HALF:
      return "<f2";
    case tensorflow::DT_DOUBLE:
      return "<f8";
    case tensorflow::DT_INT8:
    case tensorflow::DT_QINT8:
      return "|i1";
    case tensorflow::DT_UINT8:
    case tensorflow::DT_QUINT8:
      return "|u1";
    case tensorflow::DT_INT16:
    case tensorflow::DT_QINT16:
      return "<i2";
    case tensorflow::DT_UINT16:
    case tensorflow::DT_QUINT16:
      return "<u2";
    case tensorflow::DT_INT32:
    case tensorflow::DT_QINT32:
      return "<i4";
    case tensorflow::DT_UINT32:
      return "<u4";
    case tensorflow::DT_INT64:
      return "<i8";
    case tensorflow::DT_UINT64:
      return "<u8";
    case tensorflow::DT_BOOL:
      return "|b1";
    case tensorflow::DT_COMPLEX64:
      return "<c8";
    case tensorflow::DT_COMPLEX128:
      return "<c16";
    default:
      return nullptr;
  }
}

}  // namespace

int AscendDataType(DataType dtype) {
  switch (dtype) {
    case tensorflow::DT_FLOAT:
      return 1;
    case tensorflow::DT_HALF:
      return 2;
    case tensorflow::DT_INT8:
      return 3;
    case tensorflow::DT_UINT8:
      return 4;
    case tensorflow::DT_INT16:
      return 5;
    case tensorflow::DT_UINT16:
      return 6;
    case tensorflow::DT_INT32:
      return 7;
    case tensorflow::DT_INT64:
      return 8;
    case tensorflow::DT_UINT32:
      return 9;
    case tensorflow::DT_UINT64:
      return 10;
    case tensorflow::DT_BOOL:
      return 11;
    case tensorflow::DT_DOUBLE:
      return 12;
    case tensorflow::DT_STRING:
      return 13;
    case tensorflow::DT_COMPLEX64:
      return 16;
    case tensorflow::DT_COMPLEX128:
      return 17;
    case tensorflow::DT_QINT8:
      return 18;
    case tensorflow::DT_QINT16:
      return 19;
    case tensorflow::DT_QINT32:
      return 20;
    case tensorflow::DT_QUINT8:
      return 21;
    case tensorflow::DT_QUINT16:
      return 22;
    case tensorflow::DT_RESOURCE:
      return 23;
    case tensorflow::DT_VARIANT:
      return 26;
    case tensorflow::DT_BFLOAT16:
      return 27;
    default:
      return 0;
  }
}

std::string AscendDataTypeName(DataType dtype) {
  static const char* const kNames[] = {
      "DT_UNDEFINED",     "DT_FLOAT",          "DT_FLOAT16",   "DT_INT8",       "DT_UINT8", "DT_INT16",   "DT_UINT16",
      "DT_INT32",         "DT_INT64",          "DT_UINT32",    "DT_UINT64",     "DT_BOOL",  "DT_DOUBLE",  "DT_STRING",
      "DT_DUAL_SUB_INT8", "DT_DUAL_SUB_UINT8", "DT_COMPLEX64", "DT_COMPLEX128", "DT_QINT8", "DT_QINT16",  "DT_QINT32",
      "DT_QUINT8",        "DT_QUINT16",        "DT_RESOURCE",  "DT_STRING_REF", "DT_DUAL",  "DT_VARIANT", "DT_BF16"};
  return kNames[AscendDataType(dtype)];
}

bool HasRawBytes(DataType dtype) { return NpyDescr(dtype) != nullptr; }

DumpTensor MakeDumpTensor(const tensorflow::Tensor& tensor, const std::string& data_format) {
  DumpTensor t;
  t.dtype = tensor.dtype();
  t.shape = tensor.shape();
  t.has_data = HasRawBytes(t.dtype) && tensor.IsInitialized();
  if (t.has_data) t.tensor = tensor;
  if (tensor.dims() == 4 && data_format == "NHWC") t.format = kFormatNHWC;
  if (tensor.dims() == 4 && data_format == "NCHW") t.format = kFormatNCHW;
  return t;
}

std::string EncodeDumpHeader(const std::string& op_name, uint64_t dump_time_ms, const std::vector<DumpTensor>& inputs,
                             const std::vector<DumpTensor>& outputs) {
  // DumpData {version=1, dump_time=2, output=3, input=4, op_name=6}
  ProtoWriter data;
  data.String(1, "2.0");
  data.Varint(2, dump_time_ms);
  for (size_t i = 0; i < outputs.size(); ++i) data.Bytes(3, OutputMessage(outputs[i], op_name, i));
  for (const DumpTensor& t : inputs) data.Bytes(4, InputMessage(t));
  data.String(6, op_name);
  return data.str();
}

std::string EncodeOpdebugHeader(uint64_t dump_time_ms) {
  ProtoWriter shape;
  shape.PackedVarints(1, {kOverflowPayloadSize});
  ProtoWriter out;
  out.Varint(1, AscendDataType(tensorflow::DT_UINT8));
  out.Varint(2, kFormatND);
  out.Message(3, shape);
  out.Varint(6, kOverflowPayloadSize);
  out.Message(7, shape);
  ProtoWriter data;
  data.String(1, "2.0");
  data.Varint(2, dump_time_ms);
  data.Message(3, out);
  data.String(6, "Node_OpDebug");
  return data.str();
}

std::string OverflowPayload(int64_t model_id, int64_t stream_id, int64_t task_id, uint64_t status) {
  std::string payload(kOverflowPayloadSize, '\0');
  constexpr size_t kAiCoreInfo = 256;
  constexpr size_t kAiCoreStatus = 1024;
  PutU64(&payload, kAiCoreInfo, static_cast<uint64_t>(model_id));
  PutU64(&payload, kAiCoreInfo + 8, static_cast<uint64_t>(stream_id));
  PutU64(&payload, kAiCoreInfo + 16, static_cast<uint64_t>(task_id));
  PutU64(&payload, kAiCoreStatus + 16, status);  // after kernel_code and block_idx
  return payload;
}

bool NpyNeedsWidening(DataType dtype) { return dtype == tensorflow::DT_BFLOAT16; }

std::string NpyHeader(DataType dtype, const tensorflow::TensorShape& shape) {
  std::string dims;
  for (int i = 0; i < shape.dims(); ++i) dims += std::to_string(shape.dim_size(i)) + ", ";
  if (shape.dims() > 1) dims.resize(dims.size() - 2);
  if (shape.dims() == 1) dims.pop_back();  // "(n,)"
  std::string dict =
      std::string("{'descr': '") + NpyDescr(dtype) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  constexpr size_t kPrefix = 10;  // magic (6) + version (2) + header length (2)
  size_t total = kPrefix + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  std::string header("\x93NUMPY\x01\x00", 8);
  header.push_back(static_cast<char>(dict.size() & 0xff));
  header.push_back(static_cast<char>((dict.size() >> 8) & 0xff));
  return header + dict;
}

std::string SanitizeName(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == '.' || c == '/' || c == '\\' || c == ' ') c = '_';
  }
  return out;
}

std::string ShortFileName(const std::string& long_name, const std::string& suffix) {
  char digits[24];
  std::snprintf(digits, sizeof(digits), "%020llu",
                static_cast<unsigned long long>(std::hash<std::string>()(long_name)));
  return digits + suffix;
}

}  // namespace npu_bridge
