"""``tf.contrib.opt`` of the TF1 mode: TensorFlow 1.15's contrib optimizers, written for ``tf.compat.v1.train``.

lars             ``LARSOptimizer``: momentum with a layer-wise learning rate
lazy_adam        ``LazyAdamOptimizer``: Adam that updates only the rows a sparse gradient has
moving_average   ``MovingAverageOptimizer``: another optimizer plus a moving average of its variables
nadam            ``NadamOptimizer``: Adam with Nesterov momentum
scipy_interface  ``ScipyOptimizerInterface`` / ``ExternalOptimizerInterface`` over ``scipy.optimize.minimize``
weight_decay     decoupled weight decay: ``AdamWOptimizer``, ``MomentumWOptimizer``, ``extend_with_...``
arguments        the hyperparameters' checks (Python numbers) and Adam's as tensors of a variable's dtype
sparse           helpers for sparse gradients (``IndexedSlices`` rows)
"""

from npu_bridge.core.tf1.optimizers.lars import LARSOptimizer
from npu_bridge.core.tf1.optimizers.lazy_adam import LazyAdamOptimizer
from npu_bridge.core.tf1.optimizers.moving_average import MovingAverageOptimizer
from npu_bridge.core.tf1.optimizers.nadam import NadamOptimizer
from npu_bridge.core.tf1.optimizers.scipy_interface import ExternalOptimizerInterface, ScipyOptimizerInterface
from npu_bridge.core.tf1.optimizers.weight_decay import (
    AdamWOptimizer,
    DecoupledWeightDecayExtension,
    MomentumWOptimizer,
    extend_with_decoupled_weight_decay,
)

__all__ = [
    "AdamWOptimizer",
    "DecoupledWeightDecayExtension",
    "ExternalOptimizerInterface",
    "LARSOptimizer",
    "LazyAdamOptimizer",
    "MomentumWOptimizer",
    "MovingAverageOptimizer",
    "NadamOptimizer",
    "ScipyOptimizerInterface",
    "extend_with_decoupled_weight_decay",
]
