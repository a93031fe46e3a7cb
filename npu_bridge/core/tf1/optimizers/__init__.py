"""``tf.contrib.opt`` of the TF1 mode: TensorFlow 1.15's contrib optimizers, written for ``tf.compat.v1.train``."""

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
