"""``tensorflow.python.data.experimental.ops.threadpool`` of TensorFlow 1.15 for user code in the TF1 mode.

TensorFlow 1.15 ran a dataset's parallel work (``map(num_parallel_calls=...)``, ``interleave``) on a private
thread pool with ``override_threadpool(dataset, PrivateThreadPool(n))``. TensorFlow 2.21 has the same knob as a
dataset option, ``tf.data.Options().threading.private_threadpool_size`` (and ``max_intra_op_parallelism``): the
dataset returned here carries those options, so its pipeline runs on a private pool of ``num_threads`` threads.
"""

import numbers

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError


class PrivateThreadPool:
    """A private thread pool for a dataset's operations.

    Args:
      num_threads: the number of threads of the pool, an int >= 1.
      display_name: the pool's name in TensorFlow 1.15's profiles (kept; TensorFlow 2.21 names the pool itself).
      max_intra_op_parallelism: the most threads one operation of the pipeline may use, an int >= 1.
    Raises:
      NpuArgumentTypeError: an argument is not an int.
      NpuArgumentError: an argument is below 1.
    """

    def __init__(self, num_threads, display_name=None, max_intra_op_parallelism=1):
        self.num_threads = _positive("num_threads", num_threads)
        self.max_intra_op_parallelism = _positive("max_intra_op_parallelism", max_intra_op_parallelism)
        if display_name is not None and not isinstance(display_name, str):
            raise NpuArgumentTypeError(
                f"PrivateThreadPool: display_name must be a string or None, given {display_name!r}"
            )
        self.display_name = display_name

    def __repr__(self):
        return f"PrivateThreadPool(num_threads={self.num_threads}, display_name={self.display_name!r})"


def override_threadpool(dataset, thread_pool):
    """A dataset with the values of ``dataset`` whose parallel operations run on ``thread_pool``.

    Args:
      dataset: a ``tf.data.Dataset``.
      thread_pool: a ``PrivateThreadPool``.
    Returns:
      ``dataset.with_options(...)`` with ``threading.private_threadpool_size`` and
      ``threading.max_intra_op_parallelism`` set from the pool.
    Raises:
      NpuArgumentTypeError: ``dataset`` is not a dataset or ``thread_pool`` not a ``PrivateThreadPool``.
    """
    if not isinstance(dataset, tf.data.Dataset):
        raise NpuArgumentTypeError(f"override_threadpool: dataset must be a tf.data.Dataset, given {dataset!r}")
    if not isinstance(thread_pool, PrivateThreadPool):
        raise NpuArgumentTypeError(
            f"override_threadpool: thread_pool must be a PrivateThreadPool, given {thread_pool!r}"
        )
    options = tf.data.Options()
    options.threading.private_threadpool_size = thread_pool.num_threads
    options.threading.max_intra_op_parallelism = thread_pool.max_intra_op_parallelism
    return dataset.with_options(options)


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise NpuArgumentTypeError(f"PrivateThreadPool: {name} must be an int >= 1, given {value!r}")
    if value < 1:
        raise NpuArgumentError(f"PrivateThreadPool: {name} must be an int >= 1, given {value}")
    return int(value)
