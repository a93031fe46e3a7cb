"""``tf.contrib.compiler.xla`` of TensorFlow 1.15: ``compile``, ``check_function_argument_count`` (TensorFlow's
own, still in 2.21) and ``estimator_model_fn``, which makes an Estimator's ``model_fn`` run as one XLA cluster.

``estimator_model_fn(model_fn)`` (or ``@estimator_model_fn()``) returns a ``model_fn`` with the same arguments:

- TRAIN: the model function (its loss and its ``train_op``) is built inside ``xla.compile``; the spec returned has
  the compiled loss, a ``train_op`` that is that loss, and the scaffold of a ``TPUEstimatorSpec``'s ``scaffold_fn``.
- EVAL: the loss and the tensors of a ``TPUEstimatorSpec``'s ``eval_metrics`` are computed inside the cluster,
  the metric function is applied to them outside it (metrics keep their variables in the session).
- PREDICT: NotImplementedError, as in 1.15. With ``params["use_tpu"]`` true, ``model_fn`` runs as it is.

As in 1.15, the variables must be resource variables (``tf.enable_resource_variables()``), ``eval_metric_ops``
raises ValueError (use ``eval_metrics``) and ``EstimatorSpec.scaffold`` is ignored (a warning says so, once).
"""

import inspect

from tensorflow.python.compiler.xla import xla
from tensorflow.python.framework import ops
from tensorflow.python.ops import array_ops
from tensorflow.python.util import tf_decorator

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf_estimator.mode_keys import ModeKeys
from npu_bridge.core.tf_estimator.spec import EstimatorSpec

compile = xla.compile  # noqa: A001 (TensorFlow 1.15's name)
check_function_argument_count = xla.check_function_argument_count


def estimator_model_fn(target_model_fn=None):
    """Decorates a ``model_fn`` to be compiled with XLA (see the module doc).

    Args:
      target_model_fn: the model function, when called as a function (``estimator_model_fn(model_fn)``); None
        when used as ``@estimator_model_fn()``.
    Returns:
      The decorated model function, or the decorator.
    """

    def decorate(model_fn):
        return tf_decorator.make_decorator(model_fn, _CompiledModelFn(model_fn))

    return decorate(target_model_fn) if target_model_fn else decorate


def _arguments(function):
    return set(inspect.signature(function).parameters)


class _CompiledModelFn:
    """The model function ``estimator_model_fn`` returns."""

    def __init__(self, model_fn):
        self._model_fn = model_fn
        self._takes = _arguments(model_fn)

    def __call__(self, features, labels=None, mode=None, params=None, config=None):
        params = {} if params is None else params
        if params.get("use_tpu"):  # TPUEstimator compiles it itself
            return self._call(features, labels, mode, params, config)
        if mode == ModeKeys.TRAIN:
            return self._train(features, labels, params, config)
        if mode == ModeKeys.EVAL:
            return self._evaluate(features, labels, params, config)
        raise NotImplementedError(
            f"estimator_model_fn: mode {mode!r} is not supported with XLA compilation, only {ModeKeys.TRAIN!r} "
            f"and {ModeKeys.EVAL!r}"
        )

    def _train(self, features, labels, params, config):
        found = {}

        def step():
            spec = self._call(features, labels, ModeKeys.TRAIN, params, config)
            found["scaffold_fn"] = getattr(spec, "scaffold_fn", None)
            with ops.control_dependencies([spec.train_op]):
                return array_ops.identity(spec.loss)  # the train_op runs before the loss leaves the cluster

        (loss,) = compile(step)  # this module's name, so a test that patches contrib.compiler.xla.compile sees it
        return EstimatorSpec(
            mode=ModeKeys.TRAIN, loss=loss, train_op=array_ops.identity(loss), scaffold=_scaffold(found)
        )

    def _evaluate(self, features, labels, params, config):
        found = {}

        def step():
            spec = self._call(features, labels, ModeKeys.EVAL, params, config)
            found["scaffold_fn"] = getattr(spec, "scaffold_fn", None)
            metric_fn, tensors = getattr(spec, "eval_metrics", None) or (None, [])
            if isinstance(tensors, dict):  # in the order of the metric function's arguments
                tensors = [tensors[name] for name in inspect.signature(metric_fn).parameters]
            found["metric_fn"] = metric_fn
            return (spec.loss, *tensors)

        loss, *tensors = compile(step)
        metric_fn = found["metric_fn"]
        return EstimatorSpec(
            mode=ModeKeys.EVAL,
            loss=loss,
            eval_metric_ops=metric_fn(*tensors) if metric_fn else None,
            scaffold=_scaffold(found),
        )

    def _call(self, features, labels, mode, params, config):
        arguments = {}
        if "labels" in self._takes:
            arguments["labels"] = labels
        elif labels is not None:
            raise NpuArgumentError(
                f"estimator_model_fn: model_fn {getattr(self._model_fn, '__name__', self._model_fn)!r} takes no "
                "labels, but input_fn returns labels"
            )
        for name, value in (("mode", mode), ("params", params), ("config", config)):
            if name in self._takes:
                arguments[name] = value
        return _checked(self._model_fn(features=features, **arguments))


_warned = []  # the warning about EstimatorSpec.scaffold is given once


def _scaffold(found):
    scaffold_fn = found.get("scaffold_fn")
    if not scaffold_fn:
        return None
    scaffold = scaffold_fn()
    if scaffold is None:
        raise NpuArgumentError(
            "estimator_model_fn: TPUEstimatorSpec.scaffold_fn returned None; return a tf.train.Scaffold"
        )
    return scaffold


def _checked(spec):
    """The spec, after 1.15's checks of what XLA compilation cannot take."""
    if getattr(spec, "scaffold", None) is not None and not _warned:
        _warned.append(True)
        log.logger.warning(
            "estimator_model_fn: EstimatorSpec.scaffold is ignored with XLA compilation; use "
            "TPUEstimatorSpec.scaffold_fn"
        )
    if getattr(spec, "eval_metric_ops", None):
        raise NpuArgumentError(
            "estimator_model_fn: EstimatorSpec.eval_metric_ops is not supported with XLA compilation; use "
            "TPUEstimatorSpec.eval_metrics (metric_fn, tensors)"
        )
    eval_metrics = getattr(spec, "eval_metrics", None)
    if spec.mode == ModeKeys.EVAL and eval_metrics and isinstance(eval_metrics[1], dict):
        wanted, given = list(inspect.signature(eval_metrics[0]).parameters), eval_metrics[1]
        missing = [name for name in wanted if name not in given]
        extra = [name for name in given if name not in wanted]
        if missing or extra:
            raise NpuArgumentError(
                f"estimator_model_fn: the metric function of TPUEstimatorSpec.eval_metrics takes {wanted}, but its "
                f"tensors are {list(given)} (missing: {missing}, not taken: {extra})"
            )
    return spec
