"""RandomChoiceWithMask (an Ascend AI CPU op): up to ``count`` positions of the true elements of a bool tensor,
drawn at random, and a mask of the rows that hold one.

CTPN's anchor sampler in the model zoo draws its foreground and background anchors with it. The draw is TensorFlow's
``RandomShuffle`` of the positions, whose ``seed`` / ``seed2`` attributes mean what the op's do (both 0: a fresh
draw on every run); the values drawn differ from the NPU's kernel, whose generator is its own.
"""

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, shortened

_MAX_SEED = 2**63 - 1


def _integer(value, name, low):
    if isinstance(value, bool):
        raise NpuArgumentTypeError(f"randomchoicewithmask: {name} must be an int, got {shortened(value)}")
    try:
        number = value.__index__()
    except (AttributeError, TypeError):
        raise NpuArgumentTypeError(f"randomchoicewithmask: {name} must be an int, got {shortened(value)}") from None
    if not low <= number <= _MAX_SEED:
        raise NpuArgumentError(f"randomchoicewithmask: {name} must be in [{low}, 2**63 - 1], got {number}")
    return number


def randomchoicewithmask(x, count, seed=0, seed2=0):
    """``(y, mask)``: the positions of ``count`` true elements of ``x`` in random order, and which rows hold one.

    Args:
      x: bool tensor of rank 1 to 5.
      count: how many positions to draw (> 0).
      seed, seed2: the draw's seeds (>= 0); both 0 draws anew on every run.
    Returns:
      y: int32 ``[count, rank(x)]``, the coordinates of distinct true elements; when ``x`` has fewer than ``count``,
        every one of them, and rows of zeros after them.
      mask: bool ``[count]``, True for the rows of ``y`` that hold a position.
    Raises:
      NpuArgumentTypeError: count, seed or seed2 is not an int, or x is not bool.
      NpuArgumentError: count < 1, a seed out of range, or x's rank is not 1 to 5.
    """
    count = _integer(count, "count", 1)
    seed, seed2 = _integer(seed, "seed", 0), _integer(seed2, "seed2", 0)
    with tf.name_scope("RandomChoiceWithMask"):
        x = tf.convert_to_tensor(x)
        if x.dtype != tf.bool:
            raise NpuArgumentTypeError(f"randomchoicewithmask: x must be a bool tensor, got {x.dtype.name}")
        rank = x.shape.rank
        if rank is None or not 1 <= rank <= 5:
            raise NpuArgumentError(f"randomchoicewithmask: x must have rank 1 to 5, got shape {x.shape}")
        positions = tf.raw_ops.RandomShuffle(value=tf.where(x), seed=seed, seed2=seed2)
        drawn = positions[:count]
        found = tf.shape(drawn)[0]
        y = tf.pad(tf.cast(drawn, tf.int32), [[0, count - found], [0, 0]])
        y.set_shape([count, rank])
        mask = tf.range(count) < found
        return y, mask
