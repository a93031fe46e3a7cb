"""Device-to-host channels (``npu_ops.outfeed_enqueue_op`` & co) as TensorFlow queues.

On the NPU an outfeed channel carries tensors from the device to the host while the device keeps training
(``NPUEstimatorSpec(host_call=...)`` and device-side logging use it). Here a channel is an unbounded
``FIFOQueue``, one per channel name and graph, so enqueueing never blocks training; a host thread
(``NPUInfeedOutfeedSessionHook``) dequeues. ``stop_outfeed_dequeue_op`` closes the channel: what was enqueued
is still delivered, then dequeues end with ``OutOfRangeError``.
"""

import weakref

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError

_channels = weakref.WeakKeyDictionary()  # graph -> {channel name: FIFOQueue}


def _channel(channel_name, dtypes):
    """Returns the queue of ``channel_name`` in the default graph, creating it with ``dtypes`` if needed."""
    if not isinstance(channel_name, str) or not channel_name:
        raise NpuArgumentError(f"channel_name must be a non-empty string, given: {channel_name!r}")
    graph = tf.compat.v1.get_default_graph()
    queues = _channels.setdefault(graph, {})
    queue = queues.get(channel_name)
    if queue is None:
        if dtypes is None:
            raise NpuArgumentError(
                f"outfeed channel {channel_name!r} does not exist in this graph; create it with "
                "outfeed_enqueue_op or outfeed_dequeue_op first"
            )
        # Outside the caller's control dependencies and name scope: a channel belongs to the whole graph.
        with (
            graph.as_default(),
            graph.control_dependencies(None),
            graph.name_scope(None),
            tf.compat.v1.device("/cpu:0"),
        ):
            queue = tf.queue.FIFOQueue(
                capacity=-1,
                dtypes=list(dtypes),
                shared_name=f"npu_channel/{channel_name}",
                name=f"npu_channel_{channel_name.strip('_') or 'default'}",
            )
        queues[channel_name] = queue
    elif dtypes is not None and list(queue.dtypes) != [tf.as_dtype(d) for d in dtypes]:
        raise NpuArgumentError(
            f"outfeed channel {channel_name!r} carries {[d.name for d in queue.dtypes]}, not "
            f"{[tf.as_dtype(d).name for d in dtypes]}"
        )
    return queue


def outfeed_enqueue_op(channel_name, inputs, name=None):
    """Returns an op that sends ``inputs`` (a list of tensors) to the host through ``channel_name``.

    Raises:
      ValueError: a bad channel name, or the channel carries other dtypes.
    """
    inputs = [tf.convert_to_tensor(value) for value in inputs]
    return _channel(channel_name, [t.dtype for t in inputs]).enqueue(inputs, name=name)


def outfeed_dequeue_op(channel_name, output_types, output_shapes, name=None):
    """Returns the tensors of the next element of ``channel_name`` (a list, one per type).

    Raises:
      ValueError: a bad channel name, the channel carries other dtypes, or types and shapes differ in length.
    """
    if len(output_types) != len(output_shapes):
        raise NpuArgumentError(
            f"output_types ({len(output_types)}) and output_shapes ({len(output_shapes)}) must have the same length"
        )
    values = _channel(channel_name, output_types).dequeue(name=name)
    values = values if isinstance(values, (list, tuple)) else [values]
    for value, shape in zip(values, output_shapes):
        value.set_shape(shape)
    return list(values)


def stop_outfeed_dequeue_op(channel_name, name=None):
    """Returns an op that closes ``channel_name``: pending elements are still delivered, then dequeues end.

    Raises:
      ValueError: the channel does not exist in this graph.
    """
    return _channel(channel_name, None).close(cancel_pending_enqueues=False, name=name)


def channel_get_next(channel_name, output_types, output_shapes):
    """Returns the next element of the channel ``channel_name`` (as ``outfeed_dequeue_op``)."""
    return outfeed_dequeue_op(channel_name, output_types, output_shapes)
