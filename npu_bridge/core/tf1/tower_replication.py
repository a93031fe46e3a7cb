"""``tf.contrib.estimator.replicate_model_fn`` and ``TowerOptimizer`` (TensorFlow 1.15, deprecated there), for
the TF1 mode.

TensorFlow 1.15 ran one copy of the ``model_fn`` (a tower) per local GPU on a shard of the batch and summed the
towers' gradients in ``TowerOptimizer``; on one device it ran the ``model_fn`` once and ``TowerOptimizer`` passed
every call to the optimizer it wraps. npu_bridge's process drives one device, so that one-tower case is what is
provided: the replicated ``model_fn`` runs the user's ``model_fn`` once on the whole batch, and the gradients are
the model's own. ``devices`` listing several devices is not replicated over them (a warning says so): one tower
takes the whole batch, which for losses averaged over the batch gives the gradients the towers' sum gave.
"""

import copy
import weakref

import tensorflow as tf

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf_estimator import calling

__all__ = ["TowerOptimizer", "replicate_model_fn"]

_v1 = tf.compat.v1
_used_in = weakref.WeakSet()  # graphs in which a TowerOptimizer handed out its optimizer


def replicate_model_fn(model_fn, loss_reduction=_v1.losses.Reduction.SUM_BY_NONZERO_WEIGHTS, devices=None):
    """The ``model_fn`` for an Estimator that runs ``model_fn`` as one tower.

    Args:
      model_fn: the model function (``features, labels, mode[, params][, config]``) returning an EstimatorSpec.
      loss_reduction: how towers' losses were reduced (any ``tf.losses.Reduction`` but ``NONE``; with one tower the
        loss is unchanged).
      devices: TensorFlow 1.15's devices to replicate over; with more than one, one tower still takes the whole
        batch (see the module's docstring).
    Returns:
      ``model_fn(features, labels, mode, params=None, config=None)`` for ``tf.estimator.Estimator``.
    Raises:
      NpuArgumentTypeError: ``model_fn`` is not callable.
      NpuArgumentError: ``loss_reduction`` is ``NONE`` or not a ``tf.losses.Reduction``.
    """
    if not callable(model_fn):
        raise NpuArgumentTypeError(f"replicate_model_fn: model_fn must be callable, given: {model_fn!r}")
    if loss_reduction == _v1.losses.Reduction.NONE:
        raise NpuArgumentError(
            f"replicate_model_fn: tower losses need to be reduced in some way, given loss_reduction={loss_reduction!r}"
        )
    if loss_reduction not in _v1.losses.Reduction.all():
        raise NpuArgumentError(
            f"replicate_model_fn: loss_reduction must be one of {_v1.losses.Reduction.all()}, given: {loss_reduction!r}"
        )
    if devices is not None and len(devices) > 1:
        log.logger.warning(
            "replicate_model_fn: devices %s are not replicated over by npu_bridge's TF1 mode; one tower runs the "
            "model_fn on the whole batch",
            list(devices),
        )

    def single_tower_model_fn(features, labels, mode, params=None, config=None):
        with _v1.variable_scope("", reuse=False):
            return calling.call_model_fn(model_fn, features, labels, mode, copy.deepcopy(params), copy.deepcopy(config))

    return single_tower_model_fn


def _is_optimizer(value):
    """An optimizer object (TensorFlow's or a wrapper of it): what ``compute_gradients`` and ``apply_gradients``
    can be forwarded to."""
    return hasattr(value, "compute_gradients") and hasattr(value, "apply_gradients")


class TowerOptimizer(_v1.train.Optimizer):
    """Wraps an optimizer for ``replicate_model_fn``; with one tower every call goes to the wrapped optimizer.

    Args:
      optimizer_or_optimizer_fn: a ``tf.compat.v1.train.Optimizer``, or a function of no arguments returning one
        (called when the optimizer is first needed, in the model's graph).
    Raises:
      NpuArgumentTypeError: the argument is neither (or the function returns no Optimizer).
    """

    COLLECTION_FOR_GRAPH_STATES = "replicate_model_fn_graph_states"

    def __init__(self, optimizer_or_optimizer_fn):
        if not (_is_optimizer(optimizer_or_optimizer_fn) or callable(optimizer_or_optimizer_fn)):
            raise NpuArgumentTypeError(
                "TowerOptimizer: optimizer_or_optimizer_fn must be a tf.compat.v1.train.Optimizer or a function "
                f"returning one, given: {optimizer_or_optimizer_fn!r}"
            )
        super().__init__(use_locking=False, name="TowerOptimizer")
        self._optimizer_or_optimizer_fn = optimizer_or_optimizer_fn

    @staticmethod
    def has_been_used():
        """True when a TowerOptimizer gave out its optimizer in the default graph."""
        return _v1.get_default_graph() in _used_in

    def _get_optimizer(self):
        if not _is_optimizer(self._optimizer_or_optimizer_fn):
            optimizer = self._optimizer_or_optimizer_fn()
            if not _is_optimizer(optimizer):
                raise NpuArgumentTypeError(
                    f"TowerOptimizer: the optimizer function returned {optimizer!r}, not a tf.compat.v1.train.Optimizer"
                )
            self._optimizer_or_optimizer_fn = optimizer
        _used_in.add(_v1.get_default_graph())
        return self._optimizer_or_optimizer_fn

    def compute_gradients(self, loss, *args, **kwargs):
        """The wrapped optimizer's ``compute_gradients`` (one tower: the loss is not scaled)."""
        return self._get_optimizer().compute_gradients(loss, *args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, **kwargs):
        """The wrapped optimizer's ``apply_gradients`` (one tower: nothing to gather)."""
        return self._get_optimizer().apply_gradients(grads_and_vars, global_step, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._get_optimizer().get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._get_optimizer().get_slot_names(*args, **kwargs)

    def get_name(self, *args, **kwargs):
        return self._get_optimizer().get_name(*args, **kwargs)

    def variables(self, *args, **kwargs):
        return self._get_optimizer().variables(*args, **kwargs)
