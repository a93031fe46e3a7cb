"""Graph edits the quantization rewrite shares: consumers, rerouting a tensor, the quantization step counter."""

import tensorflow as tf

_v1 = tf.compat.v1
STEP_NAME = "fake_quantization_step"


def consumers(op):
    """The ops reading any output of ``op``, in a stable order (no repeats)."""
    found = {}
    for output in op.outputs:
        for consumer in output.consumers():
            found.setdefault(consumer, None)
    return list(found)


def reroute(new, old, can_modify=None):
    """Makes the consumers of ``old`` (those in ``can_modify`` when given) read ``new`` instead.

    Returns:
      The number of inputs changed.
    """
    allowed = None if can_modify is None else set(can_modify)
    changed = 0
    for consumer in list(old.consumers()):
        if allowed is not None and consumer not in allowed:
            continue
        for index, tensor in enumerate(consumer.inputs):
            if tensor is old:
                consumer._update_input(index, new)
                changed += 1
    return changed


def quantization_step():
    """The run counter of the quantized graph (``fake_quantization_step``, an int64 variable), incremented each
    time it is read: the step ``quant_delay`` and ``freeze_bn_delay`` count. Created once per graph, at the root
    name scope.

    Returns:
      The tensor ``fake_quantization_step/Identity:0``.
    """
    graph = _v1.get_default_graph()
    try:
        return graph.get_tensor_by_name(f"{STEP_NAME}/Identity:0")
    except KeyError:
        pass
    with graph.name_scope(None):
        step = _v1.get_variable(
            STEP_NAME,
            shape=[],
            dtype=tf.int64,
            initializer=_v1.zeros_initializer(),
            trainable=False,
            collections=[_v1.GraphKeys.GLOBAL_VARIABLES],
            aggregation=_v1.VariableAggregation.ONLY_FIRST_REPLICA,
        )
        with graph.name_scope(step.op.name + "/"):
            return tf.identity(_v1.assign_add(step, 1))
