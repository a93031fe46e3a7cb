"""``tensorflow.tools.graph_transforms`` of TensorFlow 1.15: ``TransformGraph``, the Graph Transform Tool in Python.

TensorFlow 2.21 still builds the tool's transforms (``strip_unused_nodes``, ``fold_constants``,
``fold_batch_norms``, ``remove_nodes(op=Identity)``, ``quantize_weights``, ...) into its library, behind the same
string interface 1.15's wrapper called (``_pywrap_transform_graph``); only the Python module went. As in 1.15, a
transform the tool rejects (an unknown name, a bad parameter, a node that is not in the graph) raises
``tf.errors.InvalidArgumentError`` with the tool's message.
"""

from tensorflow.core.framework import graph_pb2
from tensorflow.python.framework import errors
from tensorflow.python.util import _pywrap_transform_graph

from npu_bridge.core.runtime.errors import NpuArgumentTypeError


def TransformGraph(input_graph_def, inputs, outputs, transforms):  # noqa: N802 (TensorFlow 1.15's name)
    """Applies ``transforms`` to a copy of ``input_graph_def``.

    Args:
      input_graph_def: the ``GraphDef`` to transform.
      inputs: the names of the graph's input nodes (a list).
      outputs: the names of its output nodes (a list).
      transforms: the transforms, each a name with optional parameters (``"fold_constants(ignore_errors=true)"``),
        applied in order.
    Returns:
      The transformed ``GraphDef``.
    Raises:
      TypeError: ``inputs``, ``outputs`` or ``transforms`` is a string rather than a list of them.
      tf.errors.InvalidArgumentError: the tool rejected a transform.
    """
    for name, value in (("inputs", inputs), ("outputs", outputs), ("transforms", transforms)):
        if isinstance(value, (str, bytes)):
            raise NpuArgumentTypeError(f"TransformGraph: {name}={value!r} must be a list of strings, not one string")
    try:
        result = _pywrap_transform_graph.TransformGraphWithStringInputs(
            input_graph_def.SerializeToString(),
            ",".join(inputs).encode(),
            ",".join(outputs).encode(),
            " ".join(transforms).encode(),
        )
    except ValueError as error:  # the tool's status, as TensorFlow 2.21's binding raises it
        message = f"TransformGraph(transforms={list(transforms)!r}): {error}"
        raise errors.InvalidArgumentError(None, None, message) from None
    output_graph_def = graph_pb2.GraphDef()
    output_graph_def.ParseFromString(result)
    return output_graph_def
