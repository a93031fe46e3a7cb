"""``HParamDef``, the protocol buffer TensorFlow 1.x's ``HParams.to_proto`` wrote (``tensorflow.HParamDef``).

TensorFlow 2.21 ships no such message, so it is declared here from its field list, in a pool of its own: the same
field numbers and types, so serialized ``HParamDef`` bytes of TensorFlow 1.x parse and ours parse there.

  HParamDef { map<string, HParamType> hparam = 1; }
  HParamType { oneof kind { int64 int64_value = 1; float float_value = 2; bytes bytes_value = 3;
                            Int64List int64_list = 4; FloatList float_list = 5; BytesList bytes_list = 6;
                            bool bool_value = 7; BoolList bool_list = 8; } }
  <X>List { repeated <x> value = 1; }  (packed for the numbers)
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_FIELD = descriptor_pb2.FieldDescriptorProto


def _file():
    proto = descriptor_pb2.FileDescriptorProto(name="npu_bridge/hparam.proto", package="tensorflow", syntax="proto3")
    message = proto.message_type.add(name="HParamDef")
    for name, kind in (
        ("BytesList", _FIELD.TYPE_BYTES),
        ("FloatList", _FIELD.TYPE_FLOAT),
        ("Int64List", _FIELD.TYPE_INT64),
        ("BoolList", _FIELD.TYPE_BOOL),
    ):
        values = message.nested_type.add(name=name).field.add(
            name="value", number=1, type=kind, label=_FIELD.LABEL_REPEATED
        )
        if kind != _FIELD.TYPE_BYTES:
            values.options.packed = True
    hparam_type = message.nested_type.add(name="HParamType")
    hparam_type.oneof_decl.add(name="kind")
    for name, number, kind, type_name in (
        ("int64_value", 1, _FIELD.TYPE_INT64, None),
        ("float_value", 2, _FIELD.TYPE_FLOAT, None),
        ("bytes_value", 3, _FIELD.TYPE_BYTES, None),
        ("int64_list", 4, _FIELD.TYPE_MESSAGE, "Int64List"),
        ("float_list", 5, _FIELD.TYPE_MESSAGE, "FloatList"),
        ("bytes_list", 6, _FIELD.TYPE_MESSAGE, "BytesList"),
        ("bool_value", 7, _FIELD.TYPE_BOOL, None),
        ("bool_list", 8, _FIELD.TYPE_MESSAGE, "BoolList"),
    ):
        field = hparam_type.field.add(name=name, number=number, type=kind, label=_FIELD.LABEL_OPTIONAL, oneof_index=0)
        if type_name:
            field.type_name = f".tensorflow.HParamDef.{type_name}"
    entry = message.nested_type.add(name="HparamEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=_FIELD.TYPE_STRING, label=_FIELD.LABEL_OPTIONAL)
    entry.field.add(
        name="value",
        number=2,
        type=_FIELD.TYPE_MESSAGE,
        label=_FIELD.LABEL_OPTIONAL,
        type_name=".tensorflow.HParamDef.HParamType",
    )
    message.field.add(
        name="hparam",
        number=1,
        type=_FIELD.TYPE_MESSAGE,
        label=_FIELD.LABEL_REPEATED,
        type_name=".tensorflow.HParamDef.HparamEntry",
    )
    return proto


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file())

HParamDef = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("tensorflow.HParamDef"))
