"""``tf.contrib.quantize`` of the TF1 mode: quantization-aware training graphs, written here from TensorFlow 1.15's
documented behaviour.

``create_training_graph`` / ``create_eval_graph`` (and their ``experimental_`` forms) fold batch norms into their
Conv2D / DepthwiseConv2dNative / MatMul layers (``fold_batch_norms``: fused ones; ``fold_unfused``: tf_slim's of
separate ops) and insert ``FakeQuantWithMinMaxVars``
ops with ``min`` / ``max`` variables on the layers' weights and activations (``rewrite``, ``quant_ops``), in place.
``graph_matcher`` is the pattern matcher they use (TensorFlow 1.15's API).

``quantize_graph`` holds the entry points; ``graph_edit`` the graph edits the rewrite shares (consumers,
rerouting a tensor, the quantization step counter).
"""

from npu_bridge.core.tf1.quantize import graph_matcher
from npu_bridge.core.tf1.quantize.quantize_graph import (
    create_eval_graph,
    create_training_graph,
    experimental_create_eval_graph,
    experimental_create_training_graph,
)

__all__ = [
    "create_eval_graph",
    "create_training_graph",
    "experimental_create_eval_graph",
    "experimental_create_training_graph",
    "graph_matcher",
]
