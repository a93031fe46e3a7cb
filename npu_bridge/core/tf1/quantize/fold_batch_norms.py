"""Folds fused batch norms into the Conv2D / DepthwiseConv2dNative / MatMul before them, as quantized inference
computes them (the weights scaled by ``gamma / sigma``, then one add).

A layer ``y = BN(conv(x, w))`` (``FusedBatchNorm`` / ``V3``, possibly behind an ``Identity`` or, for a MatMul, between
two ``Reshape``s as tf_slim builds it) becomes, in the layer's name scope::

    mul_fold    = w * gamma / sigma                          (BatchNorm_Fold/...; the weights the rewrite quantizes)
    <Op>_Fold   = conv(x, mul_fold)
    add_fold    = <Op>_Fold + (beta - mean * gamma / sigma)  (BatchNorm_Fold/bias)

and the batch norm's consumers read ``add_fold``. In an eval graph (or a batch norm in inference mode) ``mean`` and
``sigma`` are the moving statistics. In a training graph they are the batch's (the variance without Bessel's
correction), and the weights are scaled by the moving sigma instead, a correction undoing it after the convolution
(``correction_mult`` before, ``post_conv_mul`` after): the quantized weights then change slowly. With
``freeze_bn_delay``, after that many steps the moving statistics are used and no longer updated (``correction_add``
shifts the output to them). The batch norm op keeps computing the batch statistics; its gradient goes through them
(``FoldFusedBatchNormGrad``). tf_slim's batch norms built from separate ops are folded by ``fold_unfused``.
"""

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2
from tensorflow.python.framework import ops

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf1.quantize import graph_edit
from npu_bridge.core.tf1.quantize.graph_matcher import GraphMatcher, OneofPattern, OpTypePattern

_v1 = tf.compat.v1
GRADIENT_NAME = "FoldFusedBatchNormGrad"
_LAYER_TYPES = "Conv2D|DepthwiseConv2dNative|MatMul"


def _fold_fused_batch_norm_grad(op, *grads):
    """The gradient of a folded batch norm: through its batch mean and (Bessel-corrected) variance outputs only."""
    x = op.inputs[0]
    grad_mean, grad_var = grads[1], grads[2]
    mean = op.outputs[1]
    n = tf.cast(tf.size(x) / tf.size(mean), x.dtype)
    grad_x = tf.zeros_like(x)
    if grad_mean is not None:
        grad_x += grad_mean / n
    if grad_var is not None:
        grad_x += 2 * grad_var * (x - mean) / (n - 1)
    return [grad_x] + [None] * (len(op.inputs) - 1)


try:
    ops.RegisterGradient(GRADIENT_NAME)(_fold_fused_batch_norm_grad)
except KeyError:  # registered already (this module imported under another name)
    pass


class Match:
    """The ops and tensors of one conv / matmul + fused batch norm."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def fold_batch_norms(graph, is_training, freeze_bn_delay=None):
    """Folds every fused batch norm that follows a Conv2D / DepthwiseConv2dNative / MatMul (see the module).

    Args:
      graph: the ``tf.Graph`` to edit in place.
      is_training: True for a training graph.
      freeze_bn_delay: None, or the step from which training uses and keeps the moving statistics.
    Raises:
      NpuArgumentError: a batch norm to fold has no consumers left to reroute.
    """
    for match in _find_fused_batch_norms(graph):
        scope, separator, _ = match.layer_op.name.rpartition("/")
        with graph.as_default(), graph.name_scope(scope + separator):
            with graph.name_scope(scope + separator + "BatchNorm_Fold" + separator):
                epsilon = match.bn_op.get_attr("epsilon")
                multiplier = match.gamma * tf.math.rsqrt(match.variance + epsilon)
                bias = tf.subtract(match.beta, match.mean * multiplier, name="bias")
                corrections = None
                if is_training and match.moving_mean is not None:
                    corrections = corrections_for(match, epsilon, freeze_bn_delay)
                if match.layer_op.type == "DepthwiseConv2dNative":
                    depthwise_shape = match.weights.shape.as_list()[2:4]
                    multiplier = tf.reshape(multiplier, depthwise_shape, name="scale_reshape")
                    if corrections is not None:
                        scale = tf.reshape(corrections[0], depthwise_shape, name="correction_reshape")
                        corrections = (scale, *corrections[1:])
            weights = match.weights
            if corrections is not None:
                weights = tf.multiply(corrections[0], weights, name="correction_mult")
            folded_weights = tf.multiply(weights, multiplier, name="mul_fold")
            output = clone_layer(match.layer_op, match.input, folded_weights, match.batch_to_space_op)
            if corrections is not None:
                output = tf.multiply(corrections[1], output, name="post_conv_mul")
                output = tf.raw_ops.Add(x=output, y=corrections[2], name="correction_add")
            folded = tf.raw_ops.Add(x=output, y=bias, name="add_fold")  # Add, as TensorFlow 1.15's math_ops.add
            if graph_edit.reroute(folded, match.output) == 0:
                raise NpuArgumentError(f"folding batch norms: {match.output.name} has no consumers to reroute")


def _patterns():
    """The layer -> fused batch norm patterns (TensorFlow 1.15's shapes of them)."""
    p = {name: OpTypePattern("*") for name in ("input", "weights", "gamma", "beta", "mean", "variance")}
    p["layer"] = OpTypePattern(_LAYER_TYPES, inputs=[p["input"], p["weights"]])
    p["batch_to_space"] = OpTypePattern("BatchToSpaceND", inputs=[p["layer"], "*", "*"])
    layer_or_atrous = OneofPattern([p["batch_to_space"], p["layer"]])
    p["layer_identity"] = OpTypePattern("Identity", inputs=[layer_or_atrous])
    layer_output = OneofPattern([p["layer_identity"], p["layer"], p["batch_to_space"]])
    p["matmul_reshape"] = OpTypePattern("Reshape", inputs=[layer_output, "*"])
    p["bn"] = OpTypePattern(
        "FusedBatchNorm|FusedBatchNormV3",
        inputs=[OneofPattern([p["matmul_reshape"], layer_output]), p["gamma"], p["beta"], p["mean"], p["variance"]],
    )
    p["bn_reshape"] = OpTypePattern("Reshape", inputs=[p["bn"], "*"])
    p["bn_identity"] = OpTypePattern("Identity", inputs=[OneofPattern([p["bn"], p["bn_reshape"]])])
    return p


def _find_fused_batch_norms(graph):
    p = _patterns()
    matches, seen = [], set()
    for root in (p["bn_identity"], OneofPattern([p["bn_reshape"], p["bn"]])):
        for result in GraphMatcher(root).match_graph(graph):
            match = _layer_match(graph, p, result)
            if match is not None and match.layer_op not in seen:
                seen.add(match.layer_op)
                matches.append(match)
    return matches


def _layer_match(graph, p, result):
    layer_op = result.get_op(p["layer"])
    bn_op = result.get_op(p["bn"])
    output = bn_op.outputs[0]
    if layer_op.type == "MatMul":
        reshape = result.get_op(p["bn_reshape"])
        if reshape is None:  # a MatMul's batch norm is fused only between two reshapes
            return None
        output = reshape.outputs[0]
    if not output.consumers():
        return None
    match = Match(
        layer_op=layer_op,
        bn_op=bn_op,
        output=output,
        input=result.get_tensor(p["input"]),
        weights=result.get_tensor(p["weights"]),
        gamma=result.get_tensor(p["gamma"]),
        beta=result.get_tensor(p["beta"]),
        batch_to_space_op=result.get_op(p["batch_to_space"]),
        moving_mean=None,
        moving_variance=None,
        mean_decay=None,
        variance_decay=None,
    )
    if not bn_op.get_attr("is_training"):
        match.mean, match.variance = result.get_tensor(p["mean"]), result.get_tensor(p["variance"])
        return match
    bn_op._set_attr("_gradient_op_type", attr_value_pb2.AttrValue(s=GRADIENT_NAME.encode()))
    match.mean = bn_op.outputs[1]
    scope, separator, _ = bn_op.name.rpartition("/")
    with graph.as_default(), graph.name_scope(scope + separator):
        n = tf.cast(tf.size(result.get_tensor(p["layer"])) / tf.size(match.mean), tf.float32)
        match.variance = tf.multiply(bn_op.outputs[2], (n - 1) / n, name="Undo_Bessel_Correction")
    match.moving_mean, match.mean_decay = moving_average_update(bn_op.outputs[1])
    match.moving_variance, match.variance_decay = moving_average_update(bn_op.outputs[2])
    if match.moving_mean is None or match.moving_variance is None:
        log.logger.warning(
            "contrib.quantize: %s updates no moving mean and variance (moving = moving - (moving - batch) * decay): "
            "folded with the batch statistics only, without the training corrections",
            bn_op.name,
        )
        match.moving_mean = match.moving_variance = None
    return match


def moving_average_update(statistic):
    """(moving value, decay) of the update ``(moving - statistic) * decay``, or (None, None) when there is none."""
    for sub in statistic.consumers():
        if sub.type != "Sub" or sub.inputs[1] is not statistic:
            continue
        for mul in sub.outputs[0].consumers():
            if mul.type == "Mul" and mul.inputs[0] is sub.outputs[0]:
                return sub.inputs[0], mul.inputs[1]
    return None, None


def corrections_for(match, epsilon, freeze_bn_delay):
    """(scale, reciprocal, offset) that switch the folded layer between batch and moving statistics."""
    with _v1.name_scope("batch_norm_correction"):
        recip_sigma_moving = tf.math.rsqrt(match.moving_variance + epsilon)
        recip_sigma = tf.math.rsqrt(match.variance + epsilon)
        scale = tf.identity(tf.divide(recip_sigma_moving, recip_sigma, name="scale_compute"), name="correction_scale")
        recip = tf.math.reciprocal(scale, name="reciprocal_compute")
        offset = tf.multiply(
            match.gamma, match.mean * recip_sigma - match.moving_mean * recip_sigma_moving, name="offset_compute"
        )
        if freeze_bn_delay is None:
            return scale, recip, tf.zeros_like(offset)
        frozen = tf.greater_equal(graph_edit.quantization_step(), freeze_bn_delay, name="use_moving_average")
        _freeze(frozen, match.mean_decay, "freeze_moving_mean")
        _freeze(frozen, match.variance_decay, "freeze_moving_var")
        recip = _v1.cond(frozen, lambda: tf.ones_like(recip), lambda: recip, name="correction_recip")
        offset = _v1.cond(frozen, lambda: offset, lambda: tf.zeros_like(offset), name="correction_offset")
        return scale, recip, offset


def _freeze(frozen, decay, name):
    """Makes the moving-average update read a decay of 0 (no update) once ``frozen`` is true."""
    readers = list(decay.consumers())
    kept = _v1.cond(frozen, lambda: tf.zeros_like(decay), lambda: decay, name=name)
    graph_edit.reroute(kept, decay, can_modify=readers)


def clone_layer(layer_op, inputs, weights, batch_to_space_op):
    """``layer_op`` again (named ``<its name>_Fold``) on ``inputs`` and the folded ``weights``."""
    name = layer_op.name.split("/")[-1] + "_Fold"
    if layer_op.type == "Conv2D":
        return tf.nn.conv2d(
            inputs,
            weights,
            strides=layer_op.get_attr("strides"),
            padding=layer_op.get_attr("padding").decode(),
            data_format=layer_op.get_attr("data_format").decode(),
            dilations=layer_op.get_attr("dilations"),
            name=name,
        )
    if layer_op.type == "MatMul":
        return tf.matmul(
            inputs,
            weights,
            transpose_a=layer_op.get_attr("transpose_a"),
            transpose_b=layer_op.get_attr("transpose_b"),
            name=name,
        )
    # DepthwiseConv2dNative; an atrous one keeps its SpaceToBatchND input and gets its BatchToSpaceND again
    output = _v1.nn.depthwise_conv2d_native(
        inputs,
        weights,
        strides=layer_op.get_attr("strides"),
        padding=layer_op.get_attr("padding").decode(),
        data_format=layer_op.get_attr("data_format").decode(),
        name=name,
    )
    if batch_to_space_op is not None:
        output = tf.batch_to_space(
            output,
            batch_to_space_op.inputs[1],
            batch_to_space_op.inputs[2],
            name=batch_to_space_op.name.split("/")[-1] + "_Fold",
        )
    return output
