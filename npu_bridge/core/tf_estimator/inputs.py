"""``tf.estimator.inputs`` (TF1): input functions over numpy arrays."""

import collections

import numpy as np
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """Returns an input_fn feeding batches of numpy arrays (through tf.data instead of TF1 queues).

    Args:
      x: a numpy array or dict of name -> array (the features).
      y: a numpy array or dict of arrays (the labels), or None.
      batch_size: examples per batch.
      num_epochs: passes over the data; None repeats forever.
      shuffle: whether to shuffle (must be given, as in TensorFlow).
      queue_capacity: the shuffle buffer size.
      num_threads: ignored (tf.data decides the parallelism).
    Returns:
      An input_fn returning (features, labels) tensors (features only when ``y`` is None).
    Raises:
      ValueError: ``shuffle`` is not a bool, or the arrays have different lengths.
    """
    del num_threads
    if not isinstance(shuffle, bool):
        raise NpuArgumentError(
            "shuffle must be provided and explicitly set as boolean (it is recommended to set it "
            f"as True for training); got {shuffle!r}"
        )
    arrays = collections.OrderedDict()
    for prefix, value in (("x", x), ("y", y)):
        if isinstance(value, dict):
            arrays.update({(prefix, key): np.asarray(v) for key, v in value.items()})
        elif value is not None:
            arrays[(prefix, None)] = np.asarray(value)
    lengths = {key: len(value) for key, value in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise NpuArgumentError(f"numpy_input_fn: x and y must have the same length, got {lengths}")

    def restructure(prefix, value, elements):
        if isinstance(value, dict):
            return {key: elements[(prefix, key)] for key in value}
        return elements.get((prefix, None))

    def input_fn():
        names = list(arrays)
        dataset = tf.data.Dataset.from_tensor_slices(tuple(arrays[name] for name in names))
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        batch = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        elements = dict(zip(names, batch))
        features = restructure("x", x, elements)
        return features if y is None else (features, restructure("y", y, elements))

    return input_fn
