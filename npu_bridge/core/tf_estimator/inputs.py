"""``tf.estimator.inputs`` (TF1): input functions over numpy arrays.

The arrays are never put into the graph: the input_fn's Dataset draws batches from a Python generator
(``tf.data.Dataset.from_generator``), so the graph, ``graph.pbtxt`` and every checkpoint's ``.meta`` stay small
however large the arrays are. The generator (and so the arrays) lives in this process only.
"""

import itertools

import numpy as np
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf_estimator import missing

_X_KEY = "__direct_np_input_x_key"  # x given as one array
_Y_KEY = "__direct_np_input_y_key"


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """Returns an input_fn feeding batches of numpy arrays, as TensorFlow's TF1 ``numpy_input_fn``.

    Batches run across epoch boundaries; with ``num_epochs`` set the last batch may be smaller, and after it
    the input ends (``tf.errors.OutOfRangeError``, which stops Estimator training and evaluation). With
    ``num_epochs=None`` the data repeats forever and every batch has ``batch_size`` examples (a static shape).

    Args:
      x: a numpy array or a dict of name -> array (the features).
      y: a numpy array or a dict of name -> array (the labels), or None.
      batch_size: examples per batch, a positive int.
      num_epochs: passes over the data, a positive int; None repeats forever.
      shuffle: True to visit the examples of each epoch in a new random order (seeded by the graph's seed, e.g.
        ``RunConfig(tf_random_seed=...)``, when there is one); must be given, as in TensorFlow.
      queue_capacity: ignored (TensorFlow's size of its input queue; every epoch is shuffled as a whole here).
      num_threads: ignored (one generator feeds the batches, in order).
    Returns:
      An input_fn returning (features, labels) -- features only when ``y`` is None -- each a tensor or a dict
      of tensors, as ``x`` and ``y`` are.
    Raises:
      ValueError: ``shuffle`` is not a bool, x or y is an empty dict, x and y share a key, the arrays have
        different lengths or none, or ``batch_size`` / ``num_epochs`` is not positive.
      TypeError: x or y is neither an array nor a dict.
    """
    del queue_capacity, num_threads
    if not isinstance(shuffle, bool):
        raise NpuArgumentError(
            "shuffle must be provided and explicitly set as boolean (it is recommended to set it "
            f"as True for training); got {shuffle!r}"
        )
    _check_count("batch_size", batch_size)
    if num_epochs is not None:
        _check_count("num_epochs", num_epochs)
    arrays = _named_arrays(x, y)
    length = _common_length(arrays)

    def input_fn():
        seed = tf.compat.v1.get_default_graph().seed
        names = list(arrays)
        fixed_batch = batch_size if num_epochs is None else None
        signature = tuple(
            tf.TensorSpec([fixed_batch, *arrays[name].shape[1:]], _tf_dtype(arrays[name])) for name in names
        )

        def batches():
            rng = np.random.RandomState(seed)
            for indices in _index_batches(length, batch_size, num_epochs, shuffle, rng):
                yield tuple(arrays[name][indices] for name in names)

        dataset = tf.data.Dataset.from_generator(batches, output_signature=signature)
        batch = dict(zip(names, tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()))
        features = batch.pop(_X_KEY) if _X_KEY in batch else {key: batch[key] for key in x}
        if y is None:
            return features
        return features, (batch[_Y_KEY] if _Y_KEY in batch else {key: batch[key] for key in y})

    return input_fn


def _check_count(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise NpuArgumentError(f"numpy_input_fn: {name} must be a positive int, got {value!r}")


def _named_arrays(x, y):
    """Returns {key: array} of the features and labels, keyed by their dict keys (or _X_KEY / _Y_KEY)."""
    arrays = {}
    for what, value, single_key in (("x", x, _X_KEY), ("y", y, _Y_KEY)):
        if value is None and what == "y":
            continue
        if isinstance(value, dict):
            if not value:
                raise NpuArgumentError(f"numpy_input_fn: {what} cannot be an empty dict")
            shared = sorted(set(value) & set(arrays))
            if shared:
                raise NpuArgumentError(f"numpy_input_fn: {shared} duplicate keys are found in both x and y")
            arrays.update({key: np.asarray(item) for key, item in value.items()})
        elif isinstance(value, np.ndarray):
            arrays[single_key] = value
        else:
            raise NpuArgumentTypeError(
                f"numpy_input_fn: {what} must be a dict of numpy arrays or a numpy array, got {type(value).__name__}"
            )
    return arrays


def _common_length(arrays):
    lengths = {_public_key(key): (len(value) if value.ndim else None) for key, value in arrays.items()}
    if len(set(lengths.values())) != 1 or None in lengths.values():
        raise NpuArgumentError(
            f"numpy_input_fn: all arrays of x and y must have the same length (first dimension); got {lengths}"
        )
    length = next(iter(lengths.values()))
    if length == 0:
        raise NpuArgumentError(f"numpy_input_fn: the arrays hold no examples (lengths {lengths})")
    return length


def _public_key(key):
    return {_X_KEY: "x", _Y_KEY: "y"}.get(key, key)


def _tf_dtype(array):
    if array.dtype.kind in "OSU":
        return tf.string
    return tf.as_dtype(array.dtype)


def _index_batches(length, batch_size, num_epochs, shuffle, rng):
    """Yields index arrays of ``batch_size`` examples over ``num_epochs`` epochs (None: forever).

    Batches run across epoch boundaries; only the very last one (finite ``num_epochs``) may be smaller.
    """
    epochs = range(num_epochs) if num_epochs is not None else itertools.count()
    pending = np.empty(0, np.int64)
    for _ in epochs:
        order = rng.permutation(length) if shuffle else np.arange(length)
        pending = np.concatenate([pending, order])
        while len(pending) >= batch_size:
            yield pending[:batch_size]
            pending = pending[batch_size:]
    if len(pending):
        yield pending


__all__ = ["numpy_input_fn"]
__getattr__ = missing.module_getattr(
    "tf.estimator.inputs",
    __all__,
    "write an input_fn that returns a tf.data.Dataset (for a pandas DataFrame: "
    "tf.data.Dataset.from_tensor_slices((dict(df), labels)))",
)
