"""``tf.contrib.training.bucket`` and ``bucket_by_sequence_length`` of TensorFlow 1.15: queue-based bucketing.

Each element (a list or dict of tensors) is enqueued, when ``keep_input`` holds, into the queue of its bucket
(``PaddingFIFOQueue`` with ``dynamic_pad``, else ``FIFOQueue``); as soon as a bucket holds a batch, the batch moves
to a top queue together with the bucket's index, and the returned tensors dequeue one batch from there, so every
batch comes from one bucket. Two ``QueueRunner``s in the graph's ``QUEUE_RUNNERS`` collection do the moving
(``tf.train.start_queue_runners``); when the input runs out, the buckets close and, with
``allow_smaller_final_batch``, hand over their remainders as smaller batches (else those are dropped), after which
the dequeue raises ``OutOfRangeError``. Sparse tensors go through as ``tf.train.batch`` passes them. As in 1.15,
summaries ``bucket/<queue>/size`` (the top queue's size, for each bucket queue) and ``bucket/<top
queue>/fraction_of_<capacity>_full`` are added.

``bucket_by_sequence_length`` picks the bucket from ``input_length`` and increasing ``bucket_boundaries``
``b0 < b1 < ...``: bucket 0 for lengths below ``b0``, bucket i for ``b(i-1) <= length < bi``, the last for lengths
from the last boundary up; it returns the batch's lengths with the batched tensors.
"""

from tensorflow.python.framework import constant_op, dtypes, errors, ops, tensor_shape, tensor_util
from tensorflow.python.layers import utils
from tensorflow.python.ops import cond as cond_lib
from tensorflow.python.ops import control_flow_ops, data_flow_ops, math_ops
from tensorflow.python.summary import summary
from tensorflow.python.training import input as input_lib
from tensorflow.python.training import queue_runner

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError


def _flat(tensors):
    """The tensors of a list, or of a dict in the order of its keys as strings (as ``tf.train.batch`` orders them)."""
    if isinstance(tensors, dict):
        return [tensors[key] for key in sorted(tensors, key=str)]
    return list(tensors)


def _like(tensors, flat):
    """``flat`` in the structure of ``tensors`` (a dict again for a dict)."""
    if isinstance(tensors, dict):
        return dict(zip(sorted(tensors, key=str), flat))
    return flat


def _per_bucket(value, num_buckets, what):
    if isinstance(value, (list, tuple)):
        if len(value) != num_buckets:
            raise NpuArgumentError(
                f"bucket: {what}={list(value)!r} must have exactly num_buckets ({num_buckets}) elements"
            )
        return list(value)
    return [value] * num_buckets


def bucket(
    tensors,
    which_bucket,
    batch_size,
    num_buckets,
    num_threads=1,
    capacity=32,
    bucket_capacities=None,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    keep_input=True,
    shared_name=None,
    name=None,
):
    """Batches ``tensors`` (one element) by ``which_bucket``, an int32 scalar in ``[0, num_buckets)``.

    Args:
      batch_size: the batch size of every bucket, or a list of one per bucket.
      capacity: the top queue's capacity in batches, and each bucket's in elements unless ``bucket_capacities``
        (one per bucket) is given.
      shapes: the element shapes (default: the tensors' static shapes, which must then be fully defined unless
        ``dynamic_pad``); ``dynamic_pad`` pads each batch to its longest element (zeros, empty strings).
      keep_input: a bool scalar: the element is dropped when it is False.
      shared_name: share the queues across sessions under this name (``<name>_<i>`` for bucket i).
    Returns:
      ``(bucket, outputs)``: the int32 index of the batch's bucket and the batched tensors, in the structure of
      ``tensors``.
    Raises:
      ValueError: no tensors; ``batch_size`` or ``bucket_capacities`` is a list of the wrong length; shapes that
        cannot be inferred.
    """
    per_bucket_batch = isinstance(batch_size, (list, tuple))
    batch_sizes = _per_bucket(batch_size, num_buckets, "batch_size")
    if bucket_capacities is not None and not isinstance(bucket_capacities, (list, tuple)):
        raise NpuArgumentError(
            f"bucket: bucket_capacities={bucket_capacities!r} must be a list of one capacity per bucket"
        )
    capacities = _per_bucket(
        capacity if bucket_capacities is None else bucket_capacities, num_buckets, "bucket_capacities"
    )
    flat = _flat(tensors)
    with ops.name_scope(name, "bucket", flat):
        flat = ops.convert_n_to_tensor_or_composite(flat)
        if not flat:
            raise NpuArgumentError("bucket: no tensors to batch (tensors is empty)")
        keep_input = input_lib._validate_keep_input(keep_input, enqueue_many=False)
        flat, sparse_info = input_lib._store_sparse_tensors(flat, enqueue_many=False, keep_input=keep_input)
        static_batch = None
        for i, size in enumerate(batch_sizes):
            size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="batch_size")
            known = tensor_util.constant_value(size)
            batch_sizes[i] = size if known is None else int(known)
            static_batch = None if known is None else int(known)
        element_dtypes = input_lib._dtypes([flat])
        element_shapes = input_lib._shapes([flat], shapes, enqueue_many=False)
        which_bucket = ops.convert_to_tensor(which_bucket, dtype=dtypes.int32, name="which_bucket")
        make_queue = input_lib._which_queue(dynamic_pad)
        queues = [
            make_queue(
                capacity=capacities[i],
                dtypes=element_dtypes,
                shapes=element_shapes,
                shared_name=None if shared_name is None else f"{shared_name}_{i}",
                name=f"bucket_queue_{i}",
            )
            for i in range(num_buckets)
        ]
        leading = None if (allow_smaller_final_batch or per_bucket_batch) else static_batch
        # padding, so that batch shapes with an unknown first dimension are allowed
        top = data_flow_ops.PaddingFIFOQueue(
            capacity=capacity,
            dtypes=[dtypes.int32, *element_dtypes],
            shapes=[tensor_shape.TensorShape([])]
            + [tensor_shape.TensorShape([leading]).concatenate(s) for s in queues[0].shapes],
            shared_name=shared_name,
            name="top_queue",
        )

        def enqueue_into_its_bucket():
            return control_flow_ops.group(
                *[
                    cond_lib.cond(
                        math_ops.equal(which_bucket, i),
                        lambda q=queue: q.enqueue(flat),
                        control_flow_ops.no_op,
                    )
                    for i, queue in enumerate(queues)
                ],
                name="group_enqueues",
            )

        enqueue = utils.smart_cond(keep_input, enqueue_into_its_bucket, control_flow_ops.no_op)
        moves = []
        for i, (queue, size) in enumerate(zip(queues, batch_sizes)):
            take = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
            batch = take(size, name=f"read_bucket_{i}")
            batch = list(batch) if isinstance(batch, (list, tuple)) else [batch]
            moves.append(top.enqueue([constant_op.constant(i), *batch], name=f"enqueue_from_bucket_{i}"))
        closed = (errors.OutOfRangeError, errors.CancelledError)
        queue_runner.add_queue_runner(
            queue_runner.QueueRunner(
                queues[0],
                moves,
                close_op=top.close(),
                cancel_op=top.close(cancel_pending_enqueues=True),
                queue_closed_exception_types=closed,
            )
        )
        queue_runner.add_queue_runner(
            queue_runner.QueueRunner(
                top,
                [enqueue] * num_threads,
                close_op=control_flow_ops.group(*[q.close() for q in queues]),
                cancel_op=control_flow_ops.group(*[q.close(cancel_pending_enqueues=True) for q in queues]),
                queue_closed_exception_types=closed,
            )
        )
        top_size = math_ops.cast(top.size(), dtypes.float32)
        for queue in queues:
            summary.scalar(f"bucket/{queue.name}/size", top_size)
        summary.scalar(f"bucket/{top.name}/fraction_of_{capacity}_full", top_size * (1.0 / capacity))
        dequeued = top.dequeue(name="dequeue_top")
        index, batched = dequeued[0], list(dequeued[1:])
        batched = input_lib._restore_sparse_tensors(batched if len(batched) > 1 else batched[0], sparse_info)
        batched = batched if isinstance(batched, list) else [batched]
        return index, _like(tensors, batched)


def bucket_by_sequence_length(
    input_length,
    tensors,
    batch_size,
    bucket_boundaries,
    num_threads=1,
    capacity=32,
    bucket_capacities=None,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    keep_input=True,
    shared_name=None,
    name=None,
):
    """Batches ``tensors`` (one element) with elements of similar ``input_length`` (an int32 scalar).

    ``bucket_boundaries`` (increasing ints) make ``len(bucket_boundaries) + 1`` buckets (see the module doc);
    ``batch_size`` and ``bucket_capacities`` may give one value per bucket; the other arguments are ``bucket``'s
    (``shapes`` without the length's).

    Returns:
      ``(lengths, outputs)``: the int32 lengths of the batch's elements and the batched tensors, in the structure
      of ``tensors``.
    Raises:
      TypeError: ``bucket_boundaries`` is not a list or tuple of ints.
      ValueError: ``bucket_boundaries`` is empty or not increasing (and ``bucket``'s errors).
    """
    if not isinstance(bucket_boundaries, (list, tuple)):
        raise NpuArgumentTypeError(
            f"bucket_by_sequence_length: bucket_boundaries={bucket_boundaries!r} must be a list or tuple"
        )
    if not bucket_boundaries:
        raise NpuArgumentError("bucket_by_sequence_length: bucket_boundaries is empty; give at least one boundary")
    for low, high in zip(bucket_boundaries[:-1], bucket_boundaries[1:]):
        if not isinstance(low, int) or not isinstance(high, int):
            raise NpuArgumentTypeError(
                f"bucket_by_sequence_length: bucket boundaries must be ints, got {low!r} and {high!r}"
            )
        if low >= high:
            raise NpuArgumentError(
                f"bucket_by_sequence_length: bucket_boundaries={list(bucket_boundaries)!r} must increase, but {low} "
                f"comes before {high}"
            )
    flat = _flat(tensors)
    with ops.name_scope(name, "bucket_by_sequence_length", [input_length, *flat]):
        input_length = ops.convert_to_tensor(input_length, dtype=dtypes.int32, name="input_length")
        # the number of boundaries at or below the length is the index of its bucket
        reached = math_ops.less_equal(constant_op.constant(list(bucket_boundaries), dtypes.int32), input_length)
        which_bucket = math_ops.reduce_sum(math_ops.cast(reached, dtypes.int32))
        if shapes is not None:
            shapes = [tensor_shape.TensorShape([]), *shapes]
        _, batched = bucket(
            tensors=[input_length, *flat],
            which_bucket=which_bucket,
            batch_size=batch_size,
            num_buckets=len(bucket_boundaries) + 1,
            num_threads=num_threads,
            capacity=capacity,
            bucket_capacities=bucket_capacities,
            shapes=shapes,
            dynamic_pad=dynamic_pad,
            allow_smaller_final_batch=allow_smaller_final_batch,
            keep_input=keep_input,
            shared_name=shared_name,
        )
        return batched[0], _like(tensors, batched[1:])
