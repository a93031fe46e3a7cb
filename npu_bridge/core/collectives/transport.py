"""Carries HCCL data types over collective ops that support fewer types, without changing values.

Data movement (gather, broadcast, all-to-all) converts losslessly and back: small integers and bool widen to
int32, uint32 to int64; uint64 and bfloat16 are reinterpreted bit for bit as int64 / float16 where the op lacks
them. Reductions of int8 / int16 run in int32 and are narrowed back (wrapping as the narrow type would).
"""

import tensorflow as tf

_WIDEN = {
    tf.int8: tf.int32,
    tf.int16: tf.int32,
    tf.uint8: tf.int32,
    tf.uint16: tf.int32,
    tf.bool: tf.int32,
    tf.uint32: tf.int64,
}
_REINTERPRET = {tf.uint64: tf.int64, tf.bfloat16: tf.float16}


def encoded_dtype(dtype, supported):
    """Returns the dtype in ``supported`` that carries ``dtype``.

    Raises:
      TypeError: no lossless carrier exists (callers validate dtypes before).
    """
    dtype = tf.as_dtype(dtype).base_dtype
    for carrier in (dtype, _WIDEN.get(dtype), _REINTERPRET.get(dtype)):
        if carrier in supported:
            return carrier
    raise TypeError(f"no collective transport for dtype {dtype.name}")


def _convert(x, target):
    if x.dtype.base_dtype == target:
        return x
    if x.dtype.size == target.size and not x.dtype.is_bool:
        return tf.bitcast(x, target)
    return tf.cast(x, target)


def encode(x, supported):
    """Returns ``x`` converted to the dtype that carries it (see ``encoded_dtype``)."""
    return _convert(x, encoded_dtype(x.dtype, supported))


def decode(y, dtype):
    """Turns a received tensor back into ``dtype`` (the inverse of ``encode``)."""
    return _convert(y, tf.as_dtype(dtype).base_dtype)
