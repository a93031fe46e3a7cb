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
from npu_bridge.core.runtime import bounded_files
from npu_bridge.core.runtime.errors import DumpFormatError, NpuArgumentError

_HEADER_LENGTH = struct.Struct("<Q")
BLOCK_BYTES = 4 << 20  # bytes read at a time from a tensor's data
WHOLE_LIMIT = 16 << 20  # bytes: the largest tensor read whole (device formats, Fortran order, version 1 files)
_HEADER_LIMIT = 16 << 20  # bytes: the largest version 2 header read
OVERFLOW_PAYLOAD_SIZE = 2048
# Old Opdebug block: info sections {model_id, stream_id, task_id, task_type, pc_start, para_base} and status
# sections; the AI Core status starts with {kernel_code, block_idx, status}.
_OVERFLOW_SECTIONS = (("DHA Atomic Add", 0, 512), ("L2 Atomic Add", 128, 768), ("AI Core", 256, 1024))
_INFO_FIELDS = ("model_id", "stream_id", "task_id", "task_type", "pc_start", "para_base")


@dataclasses.dataclass(frozen=True)
class FileRegion:
    """Bytes of a file, read only when asked (a dump file's tensor data may be gigabytes).

    Attributes:
      path: the file.
      offset, size: where the bytes are.
    """

    path: str
    offset: int
    size: int

    def __len__(self):
        return self.size

    def blocks(self, block_size=BLOCK_BYTES, start=0):
        """Yields the bytes from ``start`` on in pieces of at most ``block_size``.

        Raises:
          DumpFormatError: the file is shorter than when it was opened.
        """
        with bounded_files.open_regular(self.path) as f:
            f.seek(self.offset + start)
            left = self.size - start
            while left > 0:
                piece = f.read(min(block_size, left))
                if not piece:
                    raise DumpFormatError(f"{self.path}: the file became shorter while it was read")
                left -= len(piece)
                yield piece

    def read(self):
        """Returns all the bytes."""
        return b"".join(self.blocks(max(self.size, 1)))


@dataclasses.dataclass
class TensorData:
    """One input or output of a dumped op.

    Attributes:
      io: "input" or "output".
      index: position among the op's inputs or outputs.
      data_type, data_format: Ascend DataType and Format values.
      shape, original_shape: stored and logical shapes.
      data: the tensor's bytes: bytes-like (version 1 files) or a ``FileRegion`` read on demand (empty for types
        without bytes, such as resources).
      fortran_order: the bytes are in Fortran order (.npy files that say so).
    """

    io: str
    index: int
    data_type: int
    data_format: int
    shape: tuple
    original_shape: tuple
    data: object
    fortran_order: bool = False

    @property
    def dtype_name(self):
        """Ascend's name of the data type, e.g. "DT_FLOAT"."""
        return dump_proto.data_type_name(self.data_type)

    @property
    def format_name(self):
        """Ascend's name of the format, e.g. "ND"."""
        return dump_proto.format_name(self.data_format)

    @property
    def nbytes(self):
        """The size of the tensor's bytes."""
        return len(self.data)

    @property
    def raw(self):
        """The tensor's bytes (read from the file when they are still there)."""
        return self.data.read() if isinstance(self.data, FileRegion) else self.data

    def numpy_dtype(self):
        """Returns the numpy dtype of the values, or None when the data type has none.

        Raises:
          DumpFormatError: the byte count does not fit the shape and data type.
        """
        dtype = dump_proto.numpy_dtype(self.data_type)
        if dtype is None:
            return None
        count = int(np.prod(self.shape, dtype=np.int64))
        if count * dtype.itemsize != self.nbytes:
            raise DumpFormatError(
                f"{self._where()}{self.io} {self.index}: {self.nbytes} bytes do not hold {count} values of "
                f"{self.dtype_name} (shape {list(self.shape)})"
            )
        return dtype

    def array(self):
        """Returns the tensor as stored as a numpy array, or None when the data type has no numpy form.

        Raises:
          DumpFormatError: the byte count does not fit the shape and data type.
        """
        dtype = self.numpy_dtype()
        if dtype is None:
            return None
        values = np.frombuffer(self.raw, dtype=dtype)
        if self.fortran_order:
            return values.reshape(self.shape[::-1]).transpose()
        return values.reshape(self.shape)

    def logical_array(self):
        """Returns ``(array, converted)``: the tensor in its logical layout (see dump_layouts)."""
        array = self.array()
        if array is None:
            return None, False
        return dump_layouts.to_logical(array, self.data_format, self.original_shape)

    @property
    def stored_in_order(self):
        """Whether the stored bytes are the logical values in C order (no device format to undo, no Fortran order),
        so they can be read piece by piece."""
        return not self.fortran_order and self.data_format not in dump_layouts.CONVERTIBLE

    def value_blocks(self, values_per_block=BLOCK_BYTES // 8):
        """Yields the values in logical C order, as 1-D numpy arrays of at most ``values_per_block`` values.

        Tensors in their logical order are read piece by piece; the others (device formats, Fortran order) are
        made whole first, up to ``WHOLE_LIMIT`` bytes.

        Raises:
          DumpFormatError: the bytes do not fit the shape, the file changed, or a tensor that must be made whole
            is larger than ``WHOLE_LIMIT``.
        """
        dtype = self.numpy_dtype()
        if dtype is None:
            return
        if self.stored_in_order:
            yield from self._stored_blocks(dtype, values_per_block)
            return
        self._require_whole()
        values = np.ascontiguousarray(self.logical_array()[0]).reshape(-1)
        for start in range(0, values.size, values_per_block):
            yield values[start : start + values_per_block]

    def logical_shape(self):
        """The shape in the logical layout (a device-format tensor is made whole to find it, up to ``WHOLE_LIMIT``).

        Raises:
          DumpFormatError: the bytes do not fit the shape, or the tensor is too large to be made whole.
        """
        if self.data_format not in dump_layouts.CONVERTIBLE or self.numpy_dtype() is None:
            return tuple(self.shape)
        self._require_whole()
        return tuple(self.logical_array()[0].shape)

    def _require_whole(self):
        if self.nbytes > WHOLE_LIMIT:
            raise DumpFormatError(
                f"{self._where()}{self.io} {self.index}: a {self.format_name} tensor of {self.nbytes} bytes is read "
                f"whole to undo its layout, and only up to {WHOLE_LIMIT} bytes are"
            )

    def _where(self):
        return f"{self.data.path}: " if isinstance(self.data, FileRegion) else ""

    def _stored_blocks(self, dtype, values_per_block):
        block_size = values_per_block * dtype.itemsize
        if not isinstance(self.data, FileRegion):
            values = np.frombuffer(self.data, dtype=dtype)
            for start in range(0, values.size, values_per_block):
                yield values[start : start + values_per_block]
            return
        for piece in self.data.blocks(block_size):
            yield np.frombuffer(piece, dtype=dtype)


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


def load(path, name=None):
    """Reads what a dump file, an Opdebug record or a .npy tensor holds; tensor data stays in the file until asked
    for (``TensorData.raw``, ``value_blocks``), except in version 1 dump files, whose data is inline.

    Args:
      path: the file.
      name: the file's ``DumpName`` when already known (e.g. resolved through mapping.csv).
    Returns:
      A ``DumpFile``.
    Raises:
      FileNotFoundError: the file does not exist.
      DumpFormatError: the file is not a dump artifact, is damaged, or its size disagrees with what its header
        lists (the message names the file and says what is wrong); raised before any tensor data is read.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such dump file: {path}")
    if name is None:
        base = os.path.basename(path)
        name = dump_names.parse(dump_names.read_mapping(os.path.dirname(path) or ".").get(base, base))
    try:
        if path.endswith(".npy"):
            return _load_npy(path, name)
        version, message, payload = _read_binary(path)
    except DumpFormatError as e:
        raise DumpFormatError(f"{path}: {e}") from None
    inputs = [_tensor("input", i, item, payload) for i, item in enumerate(message.input)]
    outputs = [_tensor("output", i, item, payload) for i, item in enumerate(message.output)]
    overflow = None
    if message.op_name == dump_names.OPDEBUG_NAME or (name is not None and name.kind == "opdebug"):
        overflow = _overflow_block(outputs)
    op_name = message.op_name or (name.op_name if name else "")
    return DumpFile(path, name, version, op_name, message.dump_time or None, inputs, outputs, overflow)


def _read_binary(path):
    """Returns (version, DumpData header, {(io, index): bytes or FileRegion}) of a binary dump file."""
    with bounded_files.open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        found, v2_problem = _read_v2_header(f, size)
        if found is not None:
            header_length, message = found
            return 2, message, _regions(path, _HEADER_LENGTH.size + header_length, _listed_sizes(message))
        if size > WHOLE_LIMIT:
            raise DumpFormatError(
                f"not an Ascend dump file: as version 2, {v2_problem}; as version 1 (one message read whole) it "
                f"is larger than {WHOLE_LIMIT} bytes"
            )
        f.seek(0)
        content = f.read()
    return (1, *_parse_v1(content, v2_problem))


def _read_v2_header(f, size):
    """Returns ((header length, DumpData header), None) of a version 2 file whose size is what its header lists,
    else (None, what is wrong as version 2).

    Raises:
      DumpFormatError: the header says version 2.0 and the file size disagrees with it.
    """
    start = f.read(_HEADER_LENGTH.size)
    if len(start) < _HEADER_LENGTH.size:
        return None, f"the file has only {size} bytes"
    (header_length,) = _HEADER_LENGTH.unpack(start)
    if _HEADER_LENGTH.size + header_length > size:
        return None, f"the header length {header_length} runs past the end of the {size}-byte file"
    if header_length > _HEADER_LIMIT:
        return None, f"the header length {header_length} is over the limit of {_HEADER_LIMIT} bytes"
    message = dump_proto.DumpData()
    try:
        message.ParseFromString(f.read(header_length))
    except DecodeError as e:
        return None, f"the {header_length}-byte header is not a DumpData message ({e})"
    listed = sum(n for _, n in _listed_sizes(message))
    held = size - _HEADER_LENGTH.size - header_length
    if listed == held:
        return (header_length, message), None
    problem = f"the header lists {listed} data bytes, the file holds {held} after the header (truncated or damaged)"
    if message.version == "2.0":  # declared version 2: not worth trying version 1
        raise DumpFormatError(f"damaged Ascend dump file (version 2.0): {problem}")
    return None, problem


def _parse_v1(content, v2_problem):
    """Returns (DumpData message, {(io, index): bytes}) of a version 1 file's ``content``."""
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
    return message, inline


def _listed_sizes(message):
    listed = [(("input", i), item.size) for i, item in enumerate(message.input)]
    listed += [(("output", i), item.size) for i, item in enumerate(message.output)]
    listed += [(("buffer", i), item.size) for i, item in enumerate(message.buffer)]
    listed += [(("space", i), item.size) for i, item in enumerate(message.space)]
    return listed


def _regions(path, offset, listed):
    regions = {}
    for key, size in listed:
        regions[key] = FileRegion(path, offset, size)
        offset += size
    return regions


def _tensor(io, index, item, payload):
    original = tuple(item.original_shape.dim) or tuple(item.shape.dim)
    return TensorData(
        io, index, item.data_type, item.format, tuple(item.shape.dim), original, payload.get((io, index), b"")
    )


def _overflow_block(outputs):
    """The decoded overflow block of an Opdebug record's outputs (read only when it has the size of one)."""
    size = outputs[0].nbytes if outputs else 0
    return decode_overflow(outputs[0].raw) if size == OVERFLOW_PAYLOAD_SIZE else {"raw": {"size": size}}


def _load_npy(path, name):
    with bounded_files.open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        try:
            version = np.lib.format.read_magic(f)
            headers = np.lib.format
            read_header = headers.read_array_header_1_0 if version == (1, 0) else headers.read_array_header_2_0
            shape, fortran_order, dtype = read_header(f)
        except (ValueError, OSError) as e:
            raise DumpFormatError(f"not a readable .npy file ({e})") from None
        offset = f.tell()
    if dtype.hasobject:
        raise DumpFormatError("not a readable .npy file (it holds Python objects)")
    try:
        data_type = dump_proto.data_type_of(dtype)
    except ValueError as e:
        raise DumpFormatError(str(e)) from None
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if offset + expected != size:
        raise DumpFormatError(
            f"the .npy header lists {expected} data bytes ({dtype} {list(shape)}), the file holds {size - offset} "
            "(truncated or damaged)"
        )
    io = name.io if name and name.io else "output"
    index = name.index if name and name.index is not None else 0
    data = FileRegion(path, offset, expected)
    tensor = TensorData(io, index, data_type, dump_proto.FORMAT_ND, shape, shape, data, fortran_order)
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
