"""Names TensorFlow 2.21 moved, added back where TF1-era code, TF 2.4 / 2.6 scripts (and tf_slim) look for them.

Add-only: a name is set only where it is missing, so nothing that exists is replaced.

- ``tensorflow.python.framework.ops.Tensor`` / ``IndexedSlices`` (now in ``framework.tensor`` and
  ``framework.indexed_slices``): tf_slim's layers test ``isinstance(x, ops.Tensor)``.
- ``tf_keras.legacy_tf_layers.<module>`` (tf_keras 2.21 has them under ``tf_keras.src.legacy_tf_layers``):
  TensorFlow's ``tensorflow/python/layers/normalization.py`` imports the former lazily, so every
  ``slim.batch_norm`` / ``tf.layers.batch_normalization`` would fail without it.
- TensorFlow-internal functions TF1-era scripts import from their old modules (``MOVED``):
  ``from tensorflow.python.ops.control_flow_ops import cond``, ``graph_util.convert_variables_to_constants``,
  ``ops.convert_to_tensor_v2``, ``rnn_cell_impl._like_rnncell``,
  ``variable_scope.variable``, ...
- ``keras.utils.multi_gpu_model`` of TensorFlow 1.15's Keras (``multi_gpu``), on tf_keras' v1 API;
  the reach of graph gradients that asks ``gradients_util._IsBackpropagatable`` again (``backprop_reach``).
- ``Graph._last_id`` (``RENAMED_PROPERTIES``): the copied ``npu_ops.py`` of TF2 scripts seeds dropout with it.
- ``Strategy.experimental_run_v2`` (``RENAMED_METHODS``), TF 1.15's name of ``Strategy.run``.
- Resource variables' ``initialized_value`` (``INHERITED_STUBS``): TensorFlow 2.21 gives them one that only raises.
"""

import importlib
import operator

from npu_bridge.core.runtime import module_aliases

# (old module, name) -> (module it lives in now, its name there)
MOVED = {
    ("tensorflow.python.ops.control_flow_ops", "cond"): ("tensorflow.python.ops.cond", "cond"),
    ("tensorflow.python.ops.control_flow_ops", "while_loop"): ("tensorflow.python.ops.while_loop", "while_loop"),
    ("tensorflow.python.ops.control_flow_ops", "Assert"): ("tensorflow.python.ops.control_flow_assert", "Assert"),
    # tf_slim's TFExampleDecoder calls control_flow_ops.case to pick the image decoder (slim's data providers)
    ("tensorflow.python.ops.control_flow_ops", "case"): ("tensorflow.python.ops.control_flow_case", "case"),
    ("tensorflow.python.ops.array_ops", "stack"): ("tensorflow.python.ops.array_ops_stack", "stack"),
    ("tensorflow.python.ops.array_ops", "unstack"): ("tensorflow.python.ops.array_ops_stack", "unstack"),
    ("tensorflow.python.framework.graph_util", "convert_variables_to_constants"): (
        "tensorflow.python.framework.convert_to_constants",
        "convert_variables_to_constants",
    ),
    ("tensorflow.python.util.nest", "is_sequence"): ("tensorflow.python.util.nest", "is_nested"),
    ("tensorflow.python.pywrap_tensorflow", "NewCheckpointReader"): (
        "tensorflow.python.training.py_checkpoint_reader",
        "NewCheckpointReader",
    ),
    # TensorFlow 2.21 dropped this helper of TF1-era custom cells; npu_bridge provides it
    ("tensorflow.python.ops.rnn_cell_impl", "_Linear"): ("npu_bridge.core.tf1.rnn_linear", "_Linear"),
    # TF 1.x's check whether an object behaves like an RNNCell; npu_bridge provides it
    ("tensorflow.python.ops.rnn_cell_impl", "_like_rnncell"): ("npu_bridge.core.tf1.rnn_cell_checks", "_like_rnncell"),
    # TF 1.15's variable_scope.variable was VariableV1 (variables created through the creator stack)
    ("tensorflow.python.ops.variable_scope", "variable"): ("tensorflow.python.ops.variable_v1", "VariableV1"),
    ("tensorflow.python.framework.ops", "convert_to_tensor_v2"): (
        "tensorflow.python.framework.tensor_conversion",
        "convert_to_tensor_v2",
    ),
    ("tensorflow.python.framework.ops", "convert_to_tensor_v2_with_dispatch"): (
        "tensorflow.python.framework.tensor_conversion",
        "convert_to_tensor_v2_with_dispatch",
    ),
    # TF 1.x's hidden name of the op wrapper (MAML-style second-order max-pool gradients)
    ("tensorflow.python.ops.gen_nn_ops", "_max_pool_grad"): ("tensorflow.python.ops.gen_nn_ops", "max_pool_grad"),
    # TF 2.0-2.6's name of the function that records an eager op on the tape (SHAP wraps and replaces it)
    ("tensorflow.python.eager.backprop", "_record_gradient"): ("tensorflow.python.eager.backprop", "record_gradient"),
    # TF 1.15 / 2.6's test of the tensors graph gradients reach through; npu_bridge provides it (backprop_reach
    # makes tf.gradients ask it again)
    ("tensorflow.python.ops.gradients_util", "_IsBackpropagatable"): (
        "npu_bridge.core.tf1.backprop_reach",
        "_IsBackpropagatable",
    ),
    # TF 1.x (up to 1.14) summed towers' sparse gradients with it; npu_bridge provides it
    ("tensorflow.python.ops.gradients_impl", "_AggregateIndexedSlicesGradients"): (
        "npu_bridge.core.tf1.indexed_slices_gradients",
        "_AggregateIndexedSlicesGradients",
    ),
}
# (module, class, old property) -> the attribute of that class holding the same value now. Graph._last_id was the
# number of operations created in the graph, which Graph.version counts.
RENAMED_PROPERTIES = {("tensorflow.python.framework.ops", "Graph", "_last_id"): "version"}
# (module, class, old method) -> the method that does the same now. TF 1.15's strategies ran a step on every
# replica with experimental_run_v2, which TensorFlow 2.2 renamed run.
RENAMED_METHODS = {("tensorflow.python.distribute.distribute_lib", "StrategyBase", "experimental_run_v2"): "run"}
# (module, class, method) -> (module, class) whose implementation the class gets. TensorFlow 2.21's resource
# variables inherit an initialized_value that only raises NotImplementedError; 1.15's (VariableV1's, which reads
# the variable once initialized, else its initial value) served them too: `tf.get_variable('ema',
# initializer=w.initialized_value(), use_resource=True)` (FQ-GAN's vector quantizer).
INHERITED_STUBS = {
    ("tensorflow.python.ops.resource_variable_ops", "BaseResourceVariable", "initialized_value"): (
        "tensorflow.python.ops.variable_v1",
        "VariableV1",
    ),
}


def _calling(current):
    """A method that calls ``current`` on its object (a subclass's own ``current`` included)."""

    def method(self, *args, **kwargs):
        return getattr(self, current)(*args, **kwargs)

    method.__doc__ = f"The same as {current} (its name before TensorFlow 2.2)."
    return method


def add():
    """Adds the names (idempotent); a piece whose package is not installed is skipped."""
    from tensorflow.python.framework import indexed_slices, ops, tensor  # only with TensorFlow

    for name, value in (("Tensor", tensor.Tensor), ("IndexedSlices", indexed_slices.IndexedSlices)):
        if not hasattr(ops, name):
            setattr(ops, name, value)
    for (old, name), (new, new_name) in MOVED.items():
        try:
            module, home = importlib.import_module(old), importlib.import_module(new)
        except ImportError:
            continue
        if not hasattr(module, name) and hasattr(home, new_name):
            setattr(module, name, getattr(home, new_name))
    for (module_name, class_name, name), current in RENAMED_PROPERTIES.items():
        owner = getattr(importlib.import_module(module_name), class_name, None)
        if owner is not None and not hasattr(owner, name) and hasattr(owner, current):
            setattr(owner, name, property(operator.attrgetter(current), doc=f"{class_name}.{current}"))
    for (module_name, class_name, name), current in RENAMED_METHODS.items():
        owner = getattr(importlib.import_module(module_name), class_name, None)
        if owner is not None and not hasattr(owner, name) and hasattr(owner, current):
            setattr(owner, name, _calling(current))
    for (module_name, class_name, name), (source_module, source_class) in INHERITED_STUBS.items():
        owner = getattr(importlib.import_module(module_name), class_name, None)
        source = getattr(importlib.import_module(source_module), source_class, None)
        if owner is not None and source is not None and name not in vars(owner) and name in vars(source):
            setattr(owner, name, vars(source)[name])
    from npu_bridge.core.tf1 import backprop_reach, multi_gpu  # import TensorFlow

    backprop_reach.add()
    multi_gpu.add()
    module_aliases.alias_package("tf_keras.legacy_tf_layers", "tf_keras.src.legacy_tf_layers")  # imports nothing
