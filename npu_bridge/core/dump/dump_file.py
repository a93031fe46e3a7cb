"""Reading and writing single dump artifacts: Ascend dump files (both binary versions), Opdebug overflow
records and .npy tensors.

Binary formats (Ascend's, written the same way here by ops/runtime/dump_writer.cc):
  v2 ("big dump")  uint64 little-endian header length, a DumpData header whose ``data`` fields are empty,
                   then the raw bytes of every input, output, buffer and workspace in that order; the file
                   size must equal 8 + header length + the sizes listed in the header.
  v1               the whole file is one DumpData message with the bytes inline.
"""

import dataclasses
import os
import struct
import time
from typing import List, Optional

import numpy as np
from google.protobuf.message import DecodeError

from npu_bridge.core.dump import dump_layouts, dump_names, dump_proto
from npu_bridge.core.runtime.errors import DumpFormatError, NpuArgumentError

_HEADER_LENGTH = struct.Struct("<Q")
OVERFLOW_PAYLOAD_SIZE = 2048
# Old Opdebug block: info sections {model_id, stream_id, task_id, task_type, pc_start, para_base} and status
# sections; the AI Core status starts with {kernel_code, block_idx, status}.
_OVERFLOW_SECTIONS = (("DHA Atomic Add", 0, 512), ("L2 Atomic Add", 128, 768), ("AI Core", 256, 1024))
_INFO_FIELDS = ("model_id", "stream_id", "task_id", "task_type", "pc_start", "para_base")


@dataclasses.dataclass
class TensorData:
    """One input or output of a dumped op.

    Attributes:
      io: "input" or "output".
      index: position among the op's inputs or outputs.
      data_type, data_format: Ascend DataType and Format values.
      shape, original_shape: stored and logical shapes.
      raw: the tensor's bytes, a bytes-like view into the file's content (empty for types without bytes,
        such as resources).
    """

    io: str
    index: int
    data_type: int
    data_format: int
    shape: tuple
    original_shape: tuple
    raw: bytes

    @property
    def dtype_name(self):
        """Ascend's name of the data type, e.g. "DT_FLOAT"."""
        return dump_proto.data_type_name(self.data_type)

    @property
    def format_name(self):
        """Ascend's name of the format, e.g. "ND"."""
        return dump_proto.format_name(self.data_format)

    def array(self):
        """Returns the tensor as stored as a numpy array, or None when the data type has no numpy form.

        Raises:
          DumpFormatError: the byte count does not fit the shape and data type.
        """
        dtype = dump_proto.numpy_dtype(self.data_type)
        if dtype is None:
            return None
        count = int(np.prod(self.shape, dtype=np.int64))
        if count * dtype.itemsize != len(self.raw):
            raise DumpFormatError(
                f"{self.io} {self.index}: {len(self.raw)} bytes do not hold {count} values of "
                f"{self.dtype_name} (shape {list(self.shape)})"
            )
        return np.frombuffer(self.raw, dtype=dtype).reshape(self.shape)

    def logical_array(self):
        """Returns ``(array, converted)``: the tensor in its logical layout (see dump_layouts)."""
        array = self.array()
        if array is None:
            return None, False
        return dump_layouts.to_logical(array, self.data_format, self.original_shape)


@dataclasses.dataclass
class DumpFile:
    """The content of one artifact.

    Attributes:
      path: the file.
      name: what the file name says (``dump_names.DumpName``; the original name when mapping.csv maps it).
      version: 1 or 2 for binary dumps, None for .npy files.
      op_name: the op name from the header (binary dumps) or the file name.
      dump_time: milliseconds since the epoch (binary dumps), else None.
      inputs, outputs: ``TensorData`` lists.
      overflow: for Opdebug records, the decoded overflow block ({section: {field: value}}); None otherwise.
    """

    path: str
    name: Optional[dump_names.DumpName]
    version: Optional[int]
    op_name: str
    dump_time: Optional[int]
    inputs: List[TensorData]
    outputs: List[TensorData]
    overflow: Optional[dict] = None

    @property
    def tensors(self):
        """Inputs, then outputs."""
        return self.inputs + self.outputs


def load(path, name=None, header_only=False):
    """Reads a dump file, an Opdebug record or a .npy tensor.

    Args:
      path: the file.
      name: the file's ``DumpName`` when already known (e.g. resolved through mapping.csv).
      header_only: read only what the tensors are, not their bytes (``raw`` stays empty), when the format
        allows it (version 2 dump files).
    Returns:
      A ``DumpFile``.
    Raises:
      FileNotFoundError: the file does not exist.
      DumpFormatError: the file is not a dump artifact or is damaged (the message says what is wrong).
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such dump file: {path}")
    if name is None:
        base = os.path.basename(path)
        name = dump_names.parse(dump_names.read_mapping(os.path.dirname(path) or ".").get(base, base))
    if path.endswith(".npy"):
        return _load_npy(path, name)
    with open(path, "rb") as f:
        content = _read_header(f, os.path.getsize(path)) if header_only else f.read()
    try:
        version, message, payload = _parse_binary(content, os.path.getsize(path))
    except DumpFormatError as e:
        raise DumpFormatError(f"{path}: {e}") from None
    inputs = [_tensor("input", i, item, payload) for i, item in enumerate(message.input)]
    outputs = [_tensor("output", i, item, payload) for i, item in enumerate(message.output)]
    overflow = None
    if message.op_name == dump_names.OPDEBUG_NAME or (name is not None and name.kind == "opdebug"):
        overflow = decode_overflow(outputs[0].raw if outputs else b"")
    op_name = message.op_name or (name.op_name if name else "")
    return DumpFile(path, name, version, op_name, message.dump_time or None, inputs, outputs, overflow)


def _read_header(f, size):
    """Reads the length and header of a version 2 file; the whole file when it may be version 1."""
    start = f.read(_HEADER_LENGTH.size)
    if len(start) == _HEADER_LENGTH.size:
        (header_length,) = _HEADER_LENGTH.unpack(start)
        if _HEADER_LENGTH.size + header_length <= size:
            header = f.read(header_length)
            message = dump_proto.DumpData()
            try:
                message.ParseFromString(header)
                if message.version == "2.0":
                    return start + header
            except DecodeError:
                pass
    f.seek(0)
    return f.read()


def _parse_binary(content, size):
    """Returns (version, DumpData header, {(io, index): bytes}); ``content`` may stop after the header."""
    v2_problem = None
    if size >= _HEADER_LENGTH.size:
        (header_length,) = _HEADER_LENGTH.unpack_from(content)
        if _HEADER_LENGTH.size + header_length > size:
            v2_problem = f"the header length {header_length} runs past the end of the {size}-byte file"
        else:
            message = dump_proto.DumpData()
            try:
                message.ParseFromString(content[_HEADER_LENGTH.size : _HEADER_LENGTH.size + header_length])
            except DecodeError as e:
                v2_problem = f"the {header_length}-byte header is not a DumpData message ({e})"
            else:
                listed = _listed_sizes(message)
                expected = _HEADER_LENGTH.size + header_length + sum(n for _, n in listed)
                if expected == size:
                    return 2, message, _slices(content, _HEADER_LENGTH.size + header_length, listed)
                v2_problem = (
                    f"the header lists {expected - _HEADER_LENGTH.size - header_length} data bytes, "
                    f"the file holds {size - _HEADER_LENGTH.size - header_length} after the header "
                    "(truncated or damaged)"
                )
                if message.version == "2.0":  # declared version 2: not worth trying version 1
                    raise DumpFormatError(f"damaged Ascend dump file (version 2.0): {v2_problem}")
    else:
        v2_problem = f"the file has only {size} bytes"
    message = dump_proto.DumpData()
    try:
        message.ParseFromString(content)
    except DecodeError:
        raise DumpFormatError(
            f"not an Ascend dump file: as version 2, {v2_problem}; as version 1, it is not a DumpData message"
        ) from None
    inline = {}
    for io, items in (("input", message.input), ("output", message.output)):
        for index, item in enumerate(items):
            if item.size and len(item.data) != item.size:
                raise DumpFormatError(
                    f"not an Ascend dump file: as version 2, {v2_problem}; as version 1, "
                    f"{io} {index} holds {len(item.data)} bytes but lists {item.size}"
                )
            inline[(io, index)] = item.data
    if not message.op_name and not inline:
        raise DumpFormatError(f"not an Ascend dump file: as version 2, {v2_problem}; as version 1 it holds no op")
    return 1, message, inline


def _listed_sizes(message):
    listed = [(("input", i), item.size) for i, item in enumerate(message.input)]
    listed += [(("output", i), item.size) for i, item in enumerate(message.output)]
    listed += [(("buffer", i), item.size) for i, item in enumerate(message.buffer)]
    listed += [(("space", i), item.size) for i, item in enumerate(message.space)]
    return listed


def _slices(content, offset, listed):
    view = memoryview(content)
    slices = {}
    for key, size in listed:
        slices[key] = view[offset : offset + size]
        offset += size
    return slices


def _tensor(io, index, item, payload):
    original = tuple(item.original_shape.dim) or tuple(item.shape.dim)
    return TensorData(
        io, index, item.data_type, item.format, tuple(item.shape.dim), original, payload.get((io, index), b"")
    )


def _load_npy(path, name):
    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as e:
        raise DumpFormatError(f"{path}: not a readable .npy file ({e})") from None
    try:
        data_type = dump_proto.data_type_of(array.dtype)
    except ValueError as e:
        raise DumpFormatError(f"{path}: {e}") from None
    io = name.io if name and name.io else "output"
    index = name.index if name and name.index is not None else 0
    tensor = TensorData(io, index, data_type, dump_proto.FORMAT_ND, array.shape, array.shape, array.tobytes(order="C"))
    return DumpFile(
        path,
        name,
        None,
        name.op_name if name else os.path.basename(path),
        None,
        [tensor] if io == "input" else [],
        [tensor] if io == "output" else [],
    )


def decode_overflow(payload):
    """Decodes the overflow block of an Opdebug record.

    Args:
      payload: the bytes of the record's output 0.
    Returns:
      {section: {field: int}} for the 2048-byte layout, else {"raw": {"size": n}} (a layout this project does
      not decode; the record is still listed by its file name).
    """
    if len(payload) != OVERFLOW_PAYLOAD_SIZE:
        return {"raw": {"size": len(payload)}}
    decoded = {}
    for section, info_offset, status_offset in _OVERFLOW_SECTIONS:
        values = dict(zip(_INFO_FIELDS, struct.unpack_from("<6Q", payload, info_offset)))
        if section == "AI Core":
            values.update(
                zip(("kernel_code", "block_idx", "status"), struct.unpack_from("<3Q", payload, status_offset))
            )
        else:
            (values["status"],) = struct.unpack_from("<Q", payload, status_offset)
        decoded[section] = values
    return decoded


def write_dump_file(path, op_name, inputs=(), outputs=(), version=2, dump_time=None, data_formats=None):
    """Writes an Ascend dump file (for tools and tests; sessions write through the C++ writer).

    Args:
      path: the file to write.
      op_name: the op name stored in the header.
      inputs, outputs: numpy arrays.
      version: 2 (header + raw bytes, what the runtime writes) or 1 (one message, bytes inline).
      dump_time: milliseconds since the epoch (default: now).
      data_formats: {("input"|"output", index): (format value, original shape)} for device-format tensors.
    Raises:
      ValueError: a bad version or an array dtype without an Ascend DataType.
    """
    if version not in (1, 2):
        raise NpuArgumentError(f"version must be 1 or 2, got {version!r}")
    message = dump_proto.DumpData(
        version="2.0" if version == 2 else "",
        op_name=op_name,
        dump_time=round(time.time() * 1000) if dump_time is None else dump_time,
    )
    payload = []
    for io, arrays, items in (("input", inputs, message.input), ("output", outputs, message.output)):
        for index, array in enumerate(arrays):
            array = np.asarray(array, order="C")  # keeps 0-d arrays 0-d, unlike ascontiguousarray
            data_format, original = (data_formats or {}).get((io, index), (dump_proto.FORMAT_ND, array.shape))
            item = items.add(data_type=dump_proto.data_type_of(array.dtype), format=data_format, size=array.nbytes)
            item.shape.dim.extend(array.shape)
            item.original_shape.dim.extend(original)
            if io == "output":
                item.original_op.name = op_name
                item.original_op.output_index = index
            if version == 1:
                item.data = array.tobytes()
            else:
                payload.append(array.tobytes())
    header = message.SerializeToString()
    with open(path, "wb") as f:
        if version == 1:
            f.write(header)
        else:
            f.write(_HEADER_LENGTH.pack(len(header)) + header + b"".join(payload))
