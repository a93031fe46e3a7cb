"""Folds tf_slim's batch norms built from separate ops (``slim.batch_norm(fused=False)``) into the layer before them.

tf_slim computes ``x * scale + (beta - mean * scale)`` in ``<prefix>BatchNorm/batchnorm_1/`` (``mul`` or ``mul_1`` for
``x * scale``, ``sub``, ``add_1``), ``scale`` being ``rsqrt(variance + epsilon)``, times ``gamma`` when it scales.
As TensorFlow 1.15 did for these (it recognised them by that name), the layer becomes, in ``<prefix>``::

    mul_fold   = w * scale                 (with the training correction first: correction_mult)
    <Op>_Fold  = conv(x, mul_fold)         (then post_conv_mul and correction_add in training)
    add_fold   = <Op>_Fold + sub

and the batch norm's consumers read ``add_fold``. The statistics and the training corrections are those of the
fused folding (``fold_batch_norms``). Other batch norms built from separate ops are left as they are (a warning
names them); 1.15 did not fold them either.
"""

import re

import tensorflow as tf

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf1.quantize import fold_batch_norms, graph_edit

_LAYERS = ("Conv2D", "DepthwiseConv2dNative", "MatMul")
_SLIM_SHIFT = re.compile(r"^(.*)BatchNorm/batchnorm_1/add_1$")
_SKIPPED = ("gradients/", "RMSProp/", "Adagrad/", "Const_", "HistogramSummary", "ScalarSummary")


def fold_unfused_batch_norms(graph, is_training, freeze_bn_delay=None):
    """Folds every tf_slim batch norm of separate ops that follows a layer (see the module).

    Raises:
      NpuArgumentError: a batch norm to fold has no consumers left to reroute.
    """
    for shift in list(graph.get_operations()):
        found = _SLIM_SHIFT.match(shift.name)
        if found is None or shift.name.startswith(_SKIPPED) or not shift.outputs[0].consumers():
            continue
        match = _match(shift, found.group(1))
        if match is None:
            continue
        with graph.as_default(), graph.name_scope(match.prefix or None):
            _fold(graph, match, is_training, freeze_bn_delay)


def warn_unfolded(graph):
    """Says which batch norms built from separate ops follow a layer and stay unfolded (their layers are not
    quantized)."""
    for op in graph.get_operations():
        if op.type != "Mul" or not re.search(r"batchnorm(_\d+)?/mul(_\d+)?$", op.name):
            continue
        layer = next((tensor.op for tensor in op.inputs if tensor.op.type in _LAYERS), None)
        shifts = [consumer for consumer in op.outputs[0].consumers() if consumer.type in ("Add", "AddV2")]
        if layer is not None and any(shift.outputs[0].consumers() for shift in shifts):  # still read: not folded
            log.logger.warning(
                "contrib.quantize: %s is a batch norm built from separate ops that is not tf_slim's: it is not "
                "folded and its layer %s is not quantized (use a fused batch norm, or tf_slim's batch_norm)",
                op.name.rsplit("/", 2)[0],
                layer.name,
            )


def _match(shift, prefix):
    """The layer, weights and statistics of the batch norm ending in ``shift`` (``add_1``), or None when no layer
    comes before it."""
    scaled, offset = shift.inputs[0].op, shift.inputs[1].op  # x * scale, beta - mean * scale
    if scaled.type != "Mul" or offset.type != "Sub":
        return None
    layer_output, scale = scaled.inputs[0], scaled.inputs[1]
    batch_to_space = None
    layer = layer_output.op
    if layer.type == "BatchToSpaceND":
        batch_to_space, layer = layer, layer.inputs[0].op
    if layer.type not in _LAYERS:
        return None
    rsqrt = scale.op if scale.op.type == "Rsqrt" else next(t.op for t in scale.op.inputs if t.op.type == "Rsqrt")
    gamma = None if scale.op is rsqrt else next(t for t in scale.op.inputs if t.op is not rsqrt)
    variance, epsilon = rsqrt.inputs[0].op.inputs[0], rsqrt.inputs[0].op.inputs[1]
    mean = offset.inputs[1].op.inputs[0]  # sub = beta - mean * scale
    match = fold_batch_norms.Match(
        prefix=prefix,
        shift=shift,
        layer_op=layer,
        batch_to_space_op=batch_to_space,
        weights=layer.inputs[1],
        scale=scale,
        offset=shift.inputs[1],
        gamma=gamma if gamma is not None else tf.ones_like(mean),
        mean=mean,
        variance=variance,
        epsilon=epsilon,
    )
    match.moving_mean, match.mean_decay = _update_of(mean)
    match.moving_variance, match.variance_decay = _update_of(variance)
    return match


def _update_of(statistic):
    """The moving-average update of a batch statistic (read directly or through tf_slim's Identity)."""
    moving, decay = fold_batch_norms.moving_average_update(statistic)
    if moving is None and statistic.op.type == "Identity":
        moving, decay = fold_batch_norms.moving_average_update(statistic.op.inputs[0])
    return moving, decay


def _fold(graph, match, is_training, freeze_bn_delay):
    corrections = None
    if is_training and match.moving_mean is not None and match.moving_variance is not None:
        corrections = fold_batch_norms.corrections_for(match, match.epsilon, freeze_bn_delay)
    scale, weights = match.scale, match.weights
    if match.layer_op.type == "DepthwiseConv2dNative":
        depthwise_shape = weights.shape.as_list()[2:4]
        scale = tf.reshape(scale, depthwise_shape, name="scale_reshape")
        if corrections is not None:
            corrections = (tf.reshape(corrections[0], depthwise_shape, name="correction_reshape"), *corrections[1:])
    if corrections is not None:
        weights = tf.multiply(corrections[0], weights, name="correction_mult")
    folded_weights = tf.multiply(weights, scale, name="mul_fold")
    with graph.name_scope(None):  # the clone keeps the layer's own name: <layer>_Fold next to it
        scope = match.layer_op.name.rpartition("/")[0]
        with graph.name_scope(scope + "/" if scope else None):
            output = fold_batch_norms.clone_layer(match.layer_op, match.layer_op.inputs[0], folded_weights, None)
        if match.batch_to_space_op is not None:  # an atrous layer: <its BatchToSpaceND>_Fold next to it
            bts = match.batch_to_space_op
            scope = bts.name.rpartition("/")[0]
            with graph.name_scope(scope + "/" if scope else None):
                output = tf.batch_to_space(
                    output, bts.inputs[1], bts.inputs[2], name=bts.name.rpartition("/")[2] + "_Fold"
                )
    if corrections is not None:
        output = tf.multiply(corrections[1], output, name="post_conv_mul")
        output = tf.raw_ops.Add(x=output, y=corrections[2], name="correction_add")
    folded = tf.raw_ops.Add(x=output, y=match.offset, name="add_fold")
    if graph_edit.reroute(folded, match.shift.outputs[0]) == 0:
        raise NpuArgumentError(f"folding batch norms: {match.shift.name} has no consumers to reroute")
