"""What the zoo's copied npu_convert_dropout.py does, with its Keras 2.6 imports: Keras' Dropout.call becomes the
NPU dropout of a copied npu_ops module, seeded the way that module seeds it (from ``Graph._last_id`` when a global
seed is set). ``CALLS`` counts the calls, ``SEEDS`` keeps the op seeds taken from the graph."""

import vendored_npu_ops as npu_ops
from keras import backend
from keras.layers.core import Dropout
from keras.utils import control_flow_util
from tensorflow.python.framework import ops
from tensorflow.python.ops import array_ops

CALLS = []
SEEDS = []


def _op_seed(seed):
    graph = ops.get_default_graph()
    if seed is None and graph.seed is not None:
        seed = graph._last_id
        SEEDS.append(seed)
    return seed


def dropout_call(self, inputs, training=None):
    """Keras Dropout on the NPU's DropOutGenMask / DropOutDoMask."""
    CALLS.append(training)
    if training is None:
        training = backend.learning_phase()

    def dropped_inputs():
        return npu_ops.dropout(
            inputs, keep_prob=1 - self.rate, noise_shape=self._get_noise_shape(inputs), seed=_op_seed(self.seed)
        )

    return control_flow_util.smart_cond(training, dropped_inputs, lambda: array_ops.identity(inputs))


Dropout.call = dropout_call
