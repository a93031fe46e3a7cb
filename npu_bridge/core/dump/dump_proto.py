"""The ``toolkit.dumpdata.DumpData`` protobuf schema of Ascend dump files, declared here in code.

The message classes come from a descriptor built at import time in a private descriptor pool (no generated
code, no clash with other copies of the schema). Ascend declares ``data_type`` and ``format`` as enums; they
are plain ``int32`` fields here, which is the same varint on the wire, so unknown enum values still parse.
The C++ writer (ops/runtime/dump_format.cc) encodes the same fields.
"""

import ml_dtypes
import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from npu_bridge.core.runtime.errors import NpuArgumentError

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
    "uint64": _F.TYPE_UINT64,
    "uint32": _F.TYPE_UINT32,
    "int32": _F.TYPE_INT32,
}

# message -> [(field, number, type, repeated)]; a type that is not a scalar names a message.
_MESSAGES = {
    "Shape": [("dim", 1, "uint64", True)],
    "DimRange": [("dim_start", 1, "uint64", False), ("dim_end", 2, "uint64", False)],
    "OriginalOp": [
        ("name", 1, "string", False),
        ("output_index", 2, "uint32", False),
        ("data_type", 3, "int32", False),
        ("format", 4, "int32", False),
    ],
    "OpOutput": [
        ("data_type", 1, "int32", False),
        ("format", 2, "int32", False),
        ("shape", 3, "Shape", False),
        ("original_op", 4, "OriginalOp", False),
        ("data", 5, "bytes", False),
        ("size", 6, "uint64", False),
        ("original_shape", 7, "Shape", False),
        ("sub_format", 8, "int32", False),
        ("address", 9, "uint64", False),
        ("dim_range", 10, "DimRange", True),
        ("offset", 11, "uint64", False),
    ],
    "OpInput": [
        ("data_type", 1, "int32", False),
        ("format", 2, "int32", False),
        ("shape", 3, "Shape", False),
        ("data", 4, "bytes", False),
        ("size", 5, "uint64", False),
        ("original_shape", 6, "Shape", False),
        ("sub_format", 7, "int32", False),
        ("address", 8, "uint64", False),
        ("offset", 9, "uint64", False),
    ],
    "OpBuffer": [("buffer_type", 1, "int32", False), ("data", 2, "bytes", False), ("size", 3, "uint64", False)],
    "OpAttr": [("name", 1, "string", False), ("value", 2, "string", False)],
    "Workspace": [("type", 1, "int32", False), ("data", 2, "bytes", False), ("size", 3, "uint64", False)],
    "DumpData": [
        ("version", 1, "string", False),
        ("dump_time", 2, "uint64", False),
        ("output", 3, "OpOutput", True),
        ("input", 4, "OpInput", True),
        ("buffer", 5, "OpBuffer", True),
        ("op_name", 6, "string", False),
        ("attr", 7, "OpAttr", True),
        ("space", 8, "Workspace", True),
    ],
}
_PACKAGE = "toolkit.dumpdata"


def _build_classes():
    schema = descriptor_pb2.FileDescriptorProto(name="npu_bridge/dump_data.proto", package=_PACKAGE, syntax="proto3")
    for name, fields in _MESSAGES.items():
        message = schema.message_type.add(name=name)
        for field_name, number, kind, repeated in fields:
            field = message.field.add(
                name=field_name, number=number, label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
            )
            if kind in _SCALARS:
                field.type = _SCALARS[kind]
            else:
                field.type = _F.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(schema)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}")) for name in _MESSAGES
    }


_CLASSES = _build_classes()
DumpData = _CLASSES["DumpData"]

# Ascend DataType value -> (name, numpy dtype or None when the bytes have no numpy equivalent).
DATA_TYPES = {
    0: ("DT_UNDEFINED", None),
    1: ("DT_FLOAT", np.float32),
    2: ("DT_FLOAT16", np.float16),
    3: ("DT_INT8", np.int8),
    4: ("DT_UINT8", np.uint8),
    5: ("DT_INT16", np.int16),
    6: ("DT_UINT16", np.uint16),
    7: ("DT_INT32", np.int32),
    8: ("DT_INT64", np.int64),
    9: ("DT_UINT32", np.uint32),
    10: ("DT_UINT64", np.uint64),
    11: ("DT_BOOL", np.bool_),
    12: ("DT_DOUBLE", np.float64),
    13: ("DT_STRING", None),
    14: ("DT_DUAL_SUB_INT8", np.int8),
    15: ("DT_DUAL_SUB_UINT8", np.uint8),
    16: ("DT_COMPLEX64", np.complex64),
    17: ("DT_COMPLEX128", np.complex128),
    18: ("DT_QINT8", np.int8),
    19: ("DT_QINT16", np.int16),
    20: ("DT_QINT32", np.int32),
    21: ("DT_QUINT8", np.uint8),
    22: ("DT_QUINT16", np.uint16),
    23: ("DT_RESOURCE", None),
    24: ("DT_STRING_REF", None),
    25: ("DT_DUAL", None),
    26: ("DT_VARIANT", None),
    27: ("DT_BF16", ml_dtypes.bfloat16),
    28: ("DT_INT4", None),
    29: ("DT_UINT1", None),
    30: ("DT_INT2", None),
    31: ("DT_UINT2", None),
    32: ("DT_COMPLEX32", None),
    33: ("DT_HIFLOAT8", None),
    34: ("DT_FLOAT8_E5M2", ml_dtypes.float8_e5m2),
    35: ("DT_FLOAT8_E4M3FN", ml_dtypes.float8_e4m3fn),
}

# Ascend Format values this project names; other values are shown as FORMAT_<n>.
FORMATS = {
    0: "NCHW",
    1: "NHWC",
    2: "ND",
    3: "NC1HWC0",
    4: "FRACTAL_Z",
    16: "HWCN",
    27: "NDHWC",
    29: "FRACTAL_NZ",
    30: "NCDHW",
    31: "DHWCN",
    32: "NDC1HWC0",
    33: "FRACTAL_Z_3D",
    40: "RESERVED",
    41: "ALL",
    42: "NULL",
}
FORMAT_NCHW, FORMAT_NHWC, FORMAT_ND, FORMAT_NC1HWC0, FORMAT_FRACTAL_NZ = 0, 1, 2, 3, 29


def data_type_name(value):
    """Returns Ascend's name of a DataType value, e.g. "DT_FLOAT" (``DT_<n>`` when unknown)."""
    return DATA_TYPES.get(value, (f"DT_{value}", None))[0]


def numpy_dtype(value):
    """Returns the numpy dtype of a DataType value, or None when its bytes have no numpy form."""
    dtype = DATA_TYPES.get(value, (None, None))[1]
    return None if dtype is None else np.dtype(dtype)


def format_name(value):
    """Returns Ascend's name of a Format value, e.g. "ND"."""
    return FORMATS.get(value, f"FORMAT_{value}")


def data_type_of(dtype):
    """Returns the Ascend DataType value of a numpy dtype.

    Raises:
      ValueError: the dtype has no Ascend equivalent.
    """
    dtype = np.dtype(dtype)
    for value, (_, candidate) in DATA_TYPES.items():
        if candidate is not None and np.dtype(candidate) == dtype and value not in (14, 15, 18, 19, 20, 21, 22):
            return value
    raise NpuArgumentError(f"numpy dtype {dtype} has no Ascend DataType")
