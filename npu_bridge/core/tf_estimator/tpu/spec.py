"""``tf.estimator.tpu.TPUEstimatorSpec``: what a TPUEstimator model_fn returns, and its ``EstimatorSpec``.

Without a TPU (TensorFlow 1.15's ``use_tpu=False`` path) the spec becomes a plain ``EstimatorSpec``:
``scaffold_fn()`` gives the scaffold, ``eval_metrics = (metric_fn, tensors)`` becomes ``metric_fn(*tensors)``
(``**tensors`` for a dict) as the eval metric ops, and ``host_call = (fn, tensors)`` runs ``fn``'s ops with every
training step (its summary writers initialized when the session starts and flushed when it ends).
"""

import collections

import tensorflow as tf
from tensorflow.python.ops import gen_summary_ops, summary_ops_v2

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf_estimator.spec import EstimatorSpec

_FIELDS = (
    "mode",
    "predictions",
    "loss",
    "train_op",
    "eval_metrics",
    "export_outputs",
    "scaffold_fn",
    "host_call",
    "training_hooks",
    "evaluation_hooks",
    "prediction_hooks",
)


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", _FIELDS)):
    """The fields of TensorFlow 1.15's ``TPUEstimatorSpec``.

    Args:
      mode, predictions, loss, train_op, export_outputs, training_hooks, evaluation_hooks, prediction_hooks: as in
        ``EstimatorSpec``.
      eval_metrics: ``(metric_fn, tensors)``: ``tensors`` a list or dict of tensors, ``metric_fn`` returning a dict
        of name -> (value, update op).
      scaffold_fn: a function of no arguments returning a ``Scaffold``.
      host_call: ``(fn, tensors)`` run with every training step (summaries, usually).
    Raises:
      ValueError, TypeError: ``eval_metrics`` / ``host_call`` is not a (callable, list or dict) pair, or
        ``scaffold_fn`` is not callable.
    """

    def __new__(
        cls,
        mode,
        predictions=None,
        loss=None,
        train_op=None,
        eval_metrics=None,
        export_outputs=None,
        scaffold_fn=None,
        host_call=None,
        training_hooks=None,
        evaluation_hooks=None,
        prediction_hooks=None,
    ):
        for name, value in (("eval_metrics", eval_metrics), ("host_call", host_call)):
            _check_call_pair(name, value)
        if scaffold_fn is not None and not callable(scaffold_fn):
            raise NpuArgumentTypeError(f"TPUEstimatorSpec: scaffold_fn must be callable, given: {scaffold_fn!r}")
        return super().__new__(
            cls,
            mode,
            predictions,
            loss,
            train_op,
            eval_metrics,
            export_outputs,
            scaffold_fn,
            host_call,
            list(training_hooks or []),
            list(evaluation_hooks or []),
            list(prediction_hooks or []),
        )

    def as_estimator_spec(self):
        """Returns the ``EstimatorSpec`` this spec means without a TPU.

        Raises:
          ValueError, TypeError: what ``EstimatorSpec`` raises for the converted fields.
        """
        training_hooks = list(self.training_hooks)
        if self.host_call is not None:
            training_hooks.append(HostCallHook(_called(self.host_call)))
        return EstimatorSpec(
            mode=self.mode,
            predictions=self.predictions,
            loss=self.loss,
            train_op=self.train_op,
            eval_metric_ops=_called(self.eval_metrics) if self.eval_metrics is not None else None,
            export_outputs=self.export_outputs,
            scaffold=self.scaffold_fn() if self.scaffold_fn is not None else None,
            training_hooks=training_hooks,
            evaluation_hooks=self.evaluation_hooks,
            prediction_hooks=self.prediction_hooks,
        )


def _check_call_pair(name, value):
    if value is None:
        return
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise NpuArgumentError(f"TPUEstimatorSpec: {name} must be a (function, tensors) pair, given: {value!r}")
    function, tensors = value
    if not callable(function):
        raise NpuArgumentTypeError(f"TPUEstimatorSpec: {name}[0] must be callable, given: {function!r}")
    if not isinstance(tensors, (tuple, list, dict)):
        raise NpuArgumentTypeError(
            f"TPUEstimatorSpec: {name}[1] must be a list or dict of tensors, given: {type(tensors).__name__}"
        )


def _called(pair):
    function, tensors = pair
    return function(**tensors) if isinstance(tensors, dict) else function(*tensors)


class HostCallHook(tf.compat.v1.train.SessionRunHook):
    """Runs a host call's outputs with every step; initializes summary writers first and flushes them at the end.

    Args:
      outputs: what the host call's function returned (ops or tensors, a list of them, or None).
    """

    def __init__(self, outputs):
        self._outputs = outputs
        self._init_ops = []
        self._flush_ops = []

    def begin(self):
        self._init_ops = summary_ops_v2.summary_writer_initializer_op()
        self._flush_ops = [gen_summary_ops.flush_summary_writer(op.inputs[0]) for op in self._init_ops]

    def after_create_session(self, session, coord):
        if self._init_ops:
            session.run(self._init_ops)

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(self._outputs)

    def end(self, session):
        if self._flush_ops:
            session.run(self._flush_ops)
