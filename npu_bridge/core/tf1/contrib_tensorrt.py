"""``tf.contrib.tensorrt`` of TensorFlow 1.15: ``create_inference_graph``, TF-TRT's conversion of a frozen graph.

As in 1.15 it hands the graph to TensorFlow's own TF-TRT converter (``tensorflow.python.compiler.tensorrt``), which
replaces the subgraphs TensorRT can run with ``TRTEngineOp`` nodes. That needs a TensorFlow built with TensorRT;
on a build without it (this CPU build) the call raises RuntimeError naming the graph's outputs, after the checks
of the arguments, as TF-TRT does. ``session_config`` (1.15's configuration of the converter's own sessions) is
accepted; TensorFlow 2.21's converter configures its sessions itself.
"""

import importlib

from tensorflow.python.compiler.tensorrt import trt_convert

from npu_bridge.core.runtime.errors import NotAvailableError, NpuArgumentError

# 1.15's default: 1 GiB of GPU memory for the engines to build in
DEFAULT_MAX_WORKSPACE_SIZE_BYTES = 1 << 30


def tensorrt_enabled():
    """True when this TensorFlow was built with TensorRT (TF-TRT can convert)."""
    try:
        utils = importlib.import_module("tensorflow.compiler.tf2tensorrt._pywrap_py_utils")
    except ImportError:
        return False
    return bool(utils.is_tensorrt_enabled())


def create_inference_graph(
    input_graph_def,
    outputs,
    max_batch_size=1,
    max_workspace_size_bytes=DEFAULT_MAX_WORKSPACE_SIZE_BYTES,
    precision_mode="FP32",
    minimum_segment_size=3,
    is_dynamic_op=False,
    maximum_cached_engines=1,
    input_saved_model_dir=None,
    input_saved_model_tags=None,
    output_saved_model_dir=None,
    session_config=None,
):
    """Converts a frozen graph (or a SavedModel) for TensorRT, keeping the nodes of ``outputs``.

    Returns:
      The converted GraphDef (and writes a SavedModel to ``output_saved_model_dir`` when given).
    Raises:
      ValueError: both or neither of ``input_graph_def`` and ``input_saved_model_dir``; an unknown
        ``precision_mode``; ``minimum_segment_size`` below 1 (other than -1).
      RuntimeError: this TensorFlow has no TensorRT.
    """
    del session_config  # see the module doc
    if (input_graph_def is None) == (input_saved_model_dir is None):
        raise NpuArgumentError(
            "tf.contrib.tensorrt.create_inference_graph: give exactly one of input_graph_def and "
            f"input_saved_model_dir (got input_graph_def={'a GraphDef' if input_graph_def is not None else None}, "
            f"input_saved_model_dir={input_saved_model_dir!r})"
        )
    modes = trt_convert.TrtPrecisionMode.supported_precision_modes()
    if precision_mode not in modes:
        raise NpuArgumentError(
            f"tf.contrib.tensorrt.create_inference_graph: precision_mode={precision_mode!r} is none of {modes}"
        )
    if minimum_segment_size <= 0 and minimum_segment_size != -1:
        raise NpuArgumentError(
            f"tf.contrib.tensorrt.create_inference_graph: minimum_segment_size={minimum_segment_size!r} must be "
            "positive (or -1: convert no segment of the main graph)"
        )
    if not tensorrt_enabled():
        raise NotAvailableError(
            f"tf.contrib.tensorrt.create_inference_graph(outputs={outputs!r}): this TensorFlow was built without "
            "TensorRT, so TF-TRT cannot convert the graph; run the frozen graph as it is"
        )
    return trt_convert.create_inference_graph(
        input_graph_def=input_graph_def,
        outputs=outputs,
        max_batch_size=max_batch_size,
        max_workspace_size_bytes=max_workspace_size_bytes,
        precision_mode=precision_mode,
        minimum_segment_size=minimum_segment_size,
        is_dynamic_op=is_dynamic_op,
        maximum_cached_engines=maximum_cached_engines,
        input_saved_model_dir=input_saved_model_dir,
        input_saved_model_tags=input_saved_model_tags,
        output_saved_model_dir=output_saved_model_dir,
    )
