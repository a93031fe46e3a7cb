"""``tf.contrib.tensorboard.plugins.projector`` of TensorFlow 1.15 for the TF1 mode: the embedding projector's
configuration messages and ``visualize_embeddings``.

The messages (``ProjectorConfig``, ``EmbeddingInfo``, ``SpriteMetadata``) have 1.15's ``projector_config.proto``
fields and numbers; they are built here (in a descriptor pool of their own) because TensorFlow 2.21 does not bring
the tensorboard package. ``visualize_embeddings(summary_writer, config)`` writes the config as text to
``projector_config.pbtxt`` in the writer's log directory, the file TensorBoard's projector reads.
"""

import os
import sys
import types

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format
from tensorflow.python.lib.io import file_io

from npu_bridge.core.runtime.errors import NpuArgumentError

__all__ = ["EmbeddingInfo", "ProjectorConfig", "SpriteMetadata", "visualize_embeddings"]

_PACKAGE = "tensorflow"
_FIELDS = {  # message: [(field, number, type, repeated, message type)]
    "SpriteMetadata": [("image_path", 1, "string", False, None), ("single_image_dim", 2, "uint32", True, None)],
    "EmbeddingInfo": [
        ("tensor_name", 1, "string", False, None),
        ("metadata_path", 2, "string", False, None),
        ("bookmarks_path", 3, "string", False, None),
        ("tensor_shape", 4, "uint32", True, None),
        ("sprite", 5, "message", False, "SpriteMetadata"),
        ("tensor_path", 6, "string", False, None),
    ],
    "ProjectorConfig": [
        ("model_checkpoint_path", 1, "string", False, None),
        ("embeddings", 2, "message", True, "EmbeddingInfo"),
        ("model_checkpoint_dir", 3, "string", False, None),
    ],
}


def _messages():
    field = descriptor_pb2.FieldDescriptorProto
    types_ = {"string": field.TYPE_STRING, "uint32": field.TYPE_UINT32, "message": field.TYPE_MESSAGE}
    proto = descriptor_pb2.FileDescriptorProto(
        name="npu_bridge/tf1/projector_config.proto", package=_PACKAGE, syntax="proto3"
    )
    for name, fields in _FIELDS.items():
        message = proto.message_type.add(name=name)
        for field_name, number, kind, repeated, type_name in fields:
            message.field.add(
                name=field_name,
                number=number,
                type=types_[kind],
                label=field.LABEL_REPEATED if repeated else field.LABEL_OPTIONAL,
                type_name=f".{_PACKAGE}.{type_name}" if type_name else None,
            )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return [message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}")) for name in _FIELDS]


SpriteMetadata, EmbeddingInfo, ProjectorConfig = _messages()


def visualize_embeddings(summary_writer, config):
    """Writes ``config`` (a ``ProjectorConfig``) as text to ``projector_config.pbtxt`` in the log directory of
    ``summary_writer`` (a ``tf.summary.FileWriter``, or anything with ``get_logdir()``).

    Raises:
      NpuArgumentError: the writer has no log directory (1.15 raised ``ValueError`` too).
    """
    logdir = summary_writer.get_logdir()
    if logdir is None:
        raise NpuArgumentError("visualize_embeddings: the summary writer must have a logdir")
    file_io.write_string_to_file(os.path.join(logdir, "projector_config.pbtxt"), text_format.MessageToString(config))


# tf.contrib.tensorboard.plugins: the namespace holding this module as its projector
plugins = types.SimpleNamespace(projector=sys.modules[__name__])
