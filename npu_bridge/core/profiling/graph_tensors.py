"""The inputs and output tensors of a graph's nodes, for step stats that lack them.

A TensorFlow profiler trace names the op kernels a call ran, but not their inputs nor their outputs' dtypes and
shapes (``profiler_trace``). The graph the call ran has them: ``of_graph`` reads each node's data inputs and its
outputs' dtypes and static shapes (a dimension TensorFlow does not know is -1, as in Ascend's dynamic shapes), so
the profile's shape columns can be filled.
"""

import collections

NodeTensors = collections.namedtuple("NodeTensors", "inputs outputs")
NodeTensors.__doc__ = """One node's tensors.

Attributes:
  inputs: its data inputs, ("producer", output index) each.
  outputs: its outputs, (``DataType`` enum value, dims tuple with -1 for an unknown dimension, or None for an
    unknown rank) each.
"""


def of_graph(graph):
    """Returns {node name: ``NodeTensors``} for every op of a ``tf.Graph`` (a function's ``FuncGraph`` too)."""
    nodes = {}
    for op in graph.get_operations():
        inputs = tuple((tensor.op.name, tensor.value_index) for tensor in op.inputs)
        outputs = tuple((tensor.dtype.as_datatype_enum, _dims(tensor.shape)) for tensor in op.outputs)
        nodes[op.name] = NodeTensors(inputs, outputs)
    return nodes


def _dims(shape):
    if shape.rank is None:
        return None
    return tuple(-1 if size is None else size for size in shape.as_list())
