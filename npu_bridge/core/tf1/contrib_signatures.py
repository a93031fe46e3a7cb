"""TensorFlow 1.15 contrib's signatures over TensorFlow's own functions, for the TF1 mode.

- ``contrib.lookup``: the functions of 1.15's ``contrib.lookup.lookup_ops`` whose first argument is ``mapping``
  (TensorFlow's own take ``vocabulary_list``), the deprecated ``string_to_index`` family, and ``HashTable``, which
  took a ``shared_name`` (TensorFlow's ``StaticHashTable`` takes none).
- ``contrib.metrics.confusion_matrix``: TensorFlow's with 1.15 contrib's argument order.
- ``contrib.util.loader.load_op_library``: TensorFlow's, a relative path taken from the calling file's directory.
"""

import inspect
import os

import tensorflow as tf
from tensorflow.python.framework import load_library
from tensorflow.python.ops import lookup_ops

from npu_bridge.core.runtime.errors import NpuArgumentError

__all__ = [
    "HashTable",
    "confusion_matrix",
    "index_table_from_tensor",
    "index_to_string",
    "index_to_string_table_from_tensor",
    "load_op_library",
    "string_to_index",
    "string_to_index_table_from_file",
    "string_to_index_table_from_tensor",
]


class HashTable(lookup_ops.StaticHashTableV1):
    """TensorFlow 1.15's ``contrib.lookup.HashTable(initializer, default_value, shared_name=None, name=None)``: a
    static table; with ``shared_name``, sessions of one server that build a table of that name share it."""

    def __init__(self, initializer, default_value, shared_name=None, name=None):
        if shared_name is not None and not isinstance(shared_name, str):
            raise NpuArgumentError(f"HashTable: shared_name must be a string or None, got {shared_name!r}")
        self._contrib_shared_name = shared_name
        super().__init__(initializer, default_value, name=name)

    def _create_resource(self):
        if self._contrib_shared_name:
            self._shared_name = self._contrib_shared_name
        return super()._create_resource()


def index_table_from_tensor(
    mapping, num_oov_buckets=0, default_value=-1, hasher_spec=lookup_ops.FastHashSpec, dtype=tf.string, name=None
):
    """A table mapping the values of ``mapping`` (1-D) to their int64 positions; see TensorFlow's
    ``index_table_from_tensor`` (its ``vocabulary_list``)."""
    if mapping is None:
        raise NpuArgumentError("index_table_from_tensor: mapping must be specified")
    return lookup_ops.index_table_from_tensor(
        vocabulary_list=mapping,
        num_oov_buckets=num_oov_buckets,
        default_value=default_value,
        hasher_spec=hasher_spec,
        dtype=dtype,
        name=name,
    )


def index_to_string_table_from_tensor(mapping, default_value="UNK", name=None):
    """A table mapping int64 positions to the strings of ``mapping`` (1-D), ``default_value`` outside it."""
    if mapping is None:
        raise NpuArgumentError("index_to_string_table_from_tensor: mapping must be specified")
    return lookup_ops.index_to_string_table_from_tensor(vocabulary_list=mapping, default_value=default_value, name=name)


def string_to_index_table_from_file(
    vocabulary_file=None,
    num_oov_buckets=0,
    vocab_size=None,
    default_value=-1,
    hasher_spec=lookup_ops.FastHashSpec,
    name=None,
):
    """Deprecated in 1.15: ``index_table_from_file`` with string keys."""
    return lookup_ops.index_table_from_file(
        vocabulary_file, num_oov_buckets, vocab_size, default_value, hasher_spec, key_dtype=tf.string, name=name
    )


def string_to_index_table_from_tensor(
    mapping, num_oov_buckets=0, default_value=-1, hasher_spec=lookup_ops.FastHashSpec, name=None
):
    """Deprecated in 1.15: ``index_table_from_tensor`` of a string ``mapping``."""
    with tf.name_scope(name or "string_to_index") as scope:
        mapping = tf.convert_to_tensor(mapping)
    if mapping.dtype.base_dtype != tf.string:
        raise NpuArgumentError(f"string_to_index_table_from_tensor requires string, got a mapping of {mapping.dtype}")
    return index_table_from_tensor(mapping, num_oov_buckets, default_value, hasher_spec, name=scope)


def string_to_index(tensor, mapping, default_value=-1, name=None):
    """Deprecated in 1.15: the int64 positions of the strings of ``tensor`` in ``mapping`` (``default_value`` for
    the others), through ``index_table_from_tensor`` (its initializer must run)."""
    return index_table_from_tensor(mapping=mapping, default_value=default_value, name=name).lookup(tensor)


def index_to_string(tensor, mapping, default_value="UNK", name=None):
    """Deprecated in 1.15: the strings of ``mapping`` at the int64 positions of ``tensor``."""
    return index_to_string_table_from_tensor(mapping=mapping, default_value=default_value, name=name).lookup(tensor)


def confusion_matrix(labels, predictions, num_classes=None, dtype=tf.int32, name=None, weights=None):
    """``tf.contrib.metrics.confusion_matrix``: ``tf.math.confusion_matrix`` with 1.15 contrib's argument order
    (``dtype`` and ``name`` before ``weights``)."""
    return tf.math.confusion_matrix(
        labels=labels, predictions=predictions, num_classes=num_classes, weights=weights, dtype=dtype, name=name
    )


def load_op_library(path):
    """TensorFlow's ``load_op_library``: loads the custom op library at ``path`` and returns the module of its ops.

    A relative ``path`` is taken from the directory of the file that calls this (1.15's ``loader`` went through
    ``resource_loader.get_path_to_datafile``), so a model's ``loader.load_op_library("ops.so")`` finds the library
    beside it whatever the working directory.
    """
    path = os.fspath(path)
    if not os.path.isabs(path):
        caller = inspect.stack()[1].filename
        path = os.path.join(os.path.dirname(os.path.abspath(caller)), path)
    return load_library.load_op_library(path)
