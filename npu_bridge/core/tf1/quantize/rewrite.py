"""Inserts fake quantization into a graph's Conv2D / DepthwiseConv2dNative / MatMul layers (after batch norm folding).

A layer is found by its shape (TensorFlow 1.15's patterns), from the largest to the smallest::

    weights (variable read, ReadVariableOp, or folded Mul)
       -> Conv2D | DepthwiseConv2dNative | MatMul  [-> BatchToSpaceND]
       [-> BiasAdd / Add  or  the folded correction and add_fold]
       [-> bypass Add]  -> activation (Relu, Relu6, Identity)  [-> post-activation bypass Add]

and gets, in the layer's name scope (``conv1/Conv2D`` -> ``conv1/``):

- ``weights_quant``: the weights, quantized over their last range (narrow range, ``weight_bits``);
- ``act_quant``: the activation's output, over a moving average of its range starting at [0, 6]
  (``activation_bits``); a layer without an activation has its bias add's output quantized this way;
- ``conv_quant`` / ``add_quant`` around a bypass (residual) add, ``post_activation_bypass_quant`` after one that
  follows the activation (not when an activation reads it: that add is fused into the activation at inference);
- an Add / Mul that reads a quantized tensor (through Reshape, Identity, pooling, ...) gets
  ``activation_<Type>_quant`` (its own name as scope), unless a Relu / Relu6 is its only consumer.

With ``quant_delay`` > 0 each quantized tensor passes through ``<name>/delayed_quant`` (a cond): the float tensor
until ``fake_quantization_step`` reaches ``quant_delay``, the quantized one after. With ``scope``, only layers
inside it are rewritten.
"""

import re

import tensorflow as tf

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf1.quantize import graph_edit, quant_ops
from npu_bridge.core.tf1.quantize.graph_matcher import GraphMatcher, OneofPattern, OpTypePattern

_v1 = tf.compat.v1
_QUANTIZABLE = "Conv2D|MatMul|DepthwiseConv2dNative"
_ACTIVATIONS = {"Relu", "Relu6", "Identity"}
_RELUS = {"Relu", "Relu6"}
_FAKE_QUANTS = {"FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVarsPerChannel"}
_ARITHMETIC = {"Add", "AddV2", "Mul"}
_PASS_THROUGH = {"Reshape", "Identity", "BatchToSpaceND", "SpaceToBatchND", "MaxPool", "Max"}


class _Layer:
    def __init__(self, layer_op, weights, activation_op, bypass_op=None, post_bypass_op=None, bias_add_op=None):
        self.layer_op = layer_op
        self.weights = weights
        self.activation_op = activation_op
        self.bypass_op = bypass_op
        self.post_bypass_op = post_bypass_op
        self.bias_add_op = bias_add_op


class _Settings:
    def __init__(self, is_training, weight_bits, activation_bits, symmetric, ema_decay, quant_delay, scope):
        self.is_training = is_training
        self.weight_bits = weight_bits
        self.activation_bits = activation_bits
        self.symmetric = symmetric
        self.ema_decay = ema_decay
        self.quant_delay = quant_delay
        self.scope = scope


def quantize(
    graph, is_training, weight_bits=8, activation_bits=8, symmetric=False, ema_decay=0.999, quant_delay=None, scope=None
):
    """Inserts the fake quantization of the module docstring into ``graph`` (in place).

    Raises:
      NpuArgumentError: a consumer of a quantized tensor could not be rerouted.
    """
    if scope and not scope.endswith("/"):
        scope += "/"
    settings = _Settings(is_training, weight_bits, activation_bits, symmetric, ema_decay, quant_delay, scope)
    readers = {op: graph_edit.consumers(op) for op in graph.get_operations()}
    done = set()
    for layer in _find_layers(graph):
        context = _context(layer.layer_op.name)
        if layer.weights is not None:
            _insert(
                settings,
                context,
                "weights_quant",
                layer.weights.op,
                readers.get(layer.weights.op, []),
                moving_average=False,
                bits=weight_bits,
                narrow_range=True,
                consumer_scope=scope,
            )
        add_context = _context(context) if layer.bypass_op is not None else context
        if layer.activation_op is not None:
            _insert(
                settings,
                add_context,
                "act_quant",
                layer.activation_op,
                readers.get(layer.activation_op, []),
                init_min=0.0,
                producer_scope=scope,
            )
            done.add(layer.activation_op)
        if layer.bypass_op is not None:
            _insert(
                settings,
                context,
                "conv_quant",
                layer.bias_add_op,
                readers.get(layer.bias_add_op, []),
                producer_scope=scope,
                consumer_scope=scope,
            )
            done.add(layer.bias_add_op)
            bypass_readers = readers.get(layer.bypass_op, [])
            if not any(reader.type in _ACTIVATIONS for reader in bypass_readers):
                _insert(
                    settings,
                    add_context,
                    "add_quant",
                    layer.bypass_op,
                    bypass_readers,
                    producer_scope=scope,
                    consumer_scope=scope,
                )
                done.add(layer.bypass_op)
        if layer.post_bypass_op is not None:
            post_readers = readers.get(layer.post_bypass_op, [])
            if not any(reader.type in _RELUS for reader in post_readers):
                _insert(
                    settings,
                    _context(layer.post_bypass_op.name),
                    "post_activation_bypass_quant",
                    layer.post_bypass_op,
                    post_readers,
                    producer_scope=scope,
                )
                done.add(layer.post_bypass_op)
    _quantize_arithmetic(graph, settings, done)


def _quantize_arithmetic(graph, settings, done):
    """``activation_<Type>_quant`` after each Add / Mul that combines quantized tensors."""
    readers = {op: graph_edit.consumers(op) for op in graph.get_operations()}
    for op in graph.get_operations():
        if _combines_quantized(op, done):
            _insert(
                settings,
                op.name,
                f"activation_{op.type}_quant",
                op,
                readers[op],
                bits=settings.activation_bits,
                producer_scope=settings.scope,
            )


def _combines_quantized(op, done, depth=0):
    if op in done or op.type not in _ARITHMETIC or depth > 100:
        return False
    outputs = op.outputs
    if len(outputs) == 1 and len(outputs[0].consumers()) == 1 and outputs[0].consumers()[0].type in _RELUS:
        return False  # fused into the activation at inference
    for tensor in op.inputs:
        source = tensor.op
        while source.type in _PASS_THROUGH and source.inputs:
            source = source.inputs[0].op
        if source.type in _FAKE_QUANTS or "delayed_quant/Merge" in source.name:
            return True
        if source.type in _ARITHMETIC and any(_combines_quantized(t.op, done, depth + 1) for t in source.inputs):
            return True
    return False


def _patterns():
    """TensorFlow 1.15's layer patterns, by role."""
    p = {}
    variable = OpTypePattern("Variable|VariableV2")
    partition_identity = OpTypePattern("Identity", inputs=[variable])
    partition_concat = OpTypePattern("ConcatV2", inputs=[partition_identity, "*", "*"])
    p["weight_identity"] = OpTypePattern(
        "Identity", inputs=[OneofPattern([partition_identity, partition_concat, variable])]
    )
    p["weight_resource"] = OpTypePattern("ReadVariableOp")
    p["folded_weight"] = OpTypePattern("Mul")
    p["layer"] = OpTypePattern(
        _QUANTIZABLE,
        inputs=["*", OneofPattern([p["weight_identity"], p["weight_resource"], p["folded_weight"]])],
        ordered_inputs=False,
    )
    batch_to_space = OpTypePattern("BatchToSpaceND", inputs=[p["layer"], "*", "*"])
    layer_output = OneofPattern([batch_to_space, p["layer"]])
    p["separable"] = OpTypePattern(_QUANTIZABLE, inputs=[OneofPattern([layer_output]), "*"], ordered_inputs=False)
    folded_bias_mul = OpTypePattern("Mul", inputs=["*", layer_output], ordered_inputs=False)
    correction = OpTypePattern("Add|AddV2", inputs=[folded_bias_mul, "*"], ordered_inputs=False)
    p["folded_bias_add"] = OpTypePattern("Add|AddV2", inputs=[correction, "*"], ordered_inputs=False)
    bn_identity = OpTypePattern("Identity", inputs=[p["folded_bias_add"]])
    p["bias_add"] = OpTypePattern("Add|AddV2|BiasAdd", inputs=[layer_output, "*"], ordered_inputs=False)
    p["bypass"] = OpTypePattern(
        "Add|AddV2",
        inputs=[OneofPattern([p["bias_add"], p["folded_bias_add"], bn_identity]), "*"],
        ordered_inputs=False,
    )
    p["activation"] = OpTypePattern(
        "|".join(sorted(_ACTIVATIONS)),
        inputs=[OneofPattern([p["bias_add"], p["folded_bias_add"], bn_identity, p["bypass"], p["layer"]])],
    )
    p["post_bypass"] = OpTypePattern("Add|AddV2", inputs=["*", p["activation"]], ordered_inputs=False)
    return p


def _weights(p, result):
    for role in ("weight_identity", "weight_resource", "folded_weight"):
        tensor = result.get_tensor(p[role])
        if tensor is not None:
            return tensor
    return None


def _bias_add(p, result):
    op = result.get_op(p["bias_add"])
    return op if op is not None else result.get_op(p["folded_bias_add"])


def _find_layers(graph):
    """Every quantizable layer once, matched by the largest pattern that fits it."""
    p = _patterns()
    layers, seen = [], set()

    def add(layer):
        if layer.layer_op not in seen:
            seen.add(layer.layer_op)
            layers.append(layer)

    for result in GraphMatcher(p["post_bypass"]).match_graph(graph):
        add(
            _Layer(
                result.get_op(p["layer"]),
                _weights(p, result),
                result.get_op(p["activation"]),
                result.get_op(p["bypass"]),
                result.get_op(p["post_bypass"]),
                _bias_add(p, result),
            )
        )
    for result in GraphMatcher(p["activation"]).match_graph(graph):
        activation = result.get_op(p["activation"])
        if result.get_op(p["layer"]) not in seen and not _feeds_only_a_batch_norm(activation):
            add(
                _Layer(
                    result.get_op(p["layer"]),
                    _weights(p, result),
                    activation,
                    result.get_op(p["bypass"]),
                    None,
                    _bias_add(p, result),
                )
            )
    # a last layer without an activation: its bias add's output is quantized as the activation
    for result in GraphMatcher(OneofPattern([p["bias_add"], p["folded_bias_add"]])).match_graph(graph):
        add(_Layer(result.get_op(p["layer"]), _weights(p, result), _bias_add(p, result)))
    # the depthwise half of a separable convolution (a conv feeding a conv directly)
    for result in GraphMatcher(p["separable"]).match_graph(graph):
        weights = result.get_tensor(p["weight_identity"])
        if weights is None:
            weights = result.get_tensor(p["weight_resource"])
        add(_Layer(result.get_op(p["layer"]), weights, result.get_op(p["layer"])))
    return layers


def _feeds_only_a_batch_norm(activation):
    """conv -> Identity -> FusedBatchNorm: the statistics of a folded batch norm, not a layer output."""
    if activation.type != "Identity" or len(activation.outputs) != 1:
        return False
    readers = activation.outputs[0].consumers()
    return len(readers) == 1 and readers[0].type in ("FusedBatchNorm", "FusedBatchNormV3")


def _followed_by_fake_quant(tensor):
    pending = list(tensor.consumers())
    while pending:
        op = pending.pop()
        if op.type in _FAKE_QUANTS:
            return True
        if op.type in ("Reshape", "Identity"):
            for output in op.outputs:
                pending.extend(output.consumers())
    return False


def _insert(
    settings,
    context,
    name,
    producer,
    consumers,
    moving_average=True,
    init_min=-6.0,
    bits=None,
    narrow_range=False,
    producer_scope=None,
    consumer_scope=None,
):
    """Puts a fake quantization between ``producer``'s first output and ``consumers``."""
    if producer_scope and not producer.name.startswith(producer_scope):
        return
    if consumer_scope and any(not consumer.name.startswith(consumer_scope) for consumer in consumers):
        return
    prefix = f"{context}/{name}" if context else name
    current_scope = _v1.get_default_graph().get_name_scope()
    if current_scope and prefix.startswith(current_scope + "/"):
        prefix = prefix[len(current_scope) + 1 :]
    inputs = producer.outputs[0]
    if _followed_by_fake_quant(inputs):
        return
    quantized = quant_ops.quantize(
        inputs,
        prefix,
        settings.is_training,
        moving_average,
        init_min=init_min,
        ema_decay=settings.ema_decay,
        num_bits=bits if bits is not None else settings.activation_bits,
        narrow_range=narrow_range,
        symmetric=settings.symmetric,
    )
    if settings.quant_delay and settings.quant_delay > 0:
        active = tf.greater_equal(graph_edit.quantization_step(), settings.quant_delay, name=prefix + "/activate_quant")
        quantized = _v1.cond(active, lambda: quantized, lambda: inputs, name=prefix + "/delayed_quant")
    if consumers and graph_edit.reroute(quantized, inputs, can_modify=consumers) < len(consumers):
        names = ", ".join(consumer.name for consumer in consumers)
        raise NpuArgumentError(f"contrib.quantize: no input of [{names}] reads {inputs.name}: cannot quantize it")
    log.logger.debug("contrib.quantize: %s quantized as %s", inputs.name, prefix)


def _context(name):
    """The name scope of an op name ("a/b/Conv2D" -> "a/b"; "" at the top)."""
    found = re.search(r"^(.*)/([^/]+)", name)
    return found.group(1) if found else ""
