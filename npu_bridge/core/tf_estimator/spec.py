"""``tf.estimator.EstimatorSpec``: what a model_fn returns, validated as TensorFlow's Estimator did."""

import collections

import tensorflow as tf
from tensorflow.python.saved_model.model_utils import export_output as export_output_lib

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf_estimator.mode_keys import ModeKeys

_FIELDS = (
    "mode",
    "predictions",
    "loss",
    "train_op",
    "eval_metric_ops",
    "export_outputs",
    "training_chief_hooks",
    "training_hooks",
    "scaffold",
    "evaluation_hooks",
    "prediction_hooks",
)


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _FIELDS)):
    """Ops and objects a model_fn returns; the fields are those of TensorFlow's EstimatorSpec.

    Args:
      mode: a ``ModeKeys`` value.
      predictions: a Tensor or dict of Tensors; required in PREDICT.
      loss: a scalar Tensor (shape [] or [1]); required in TRAIN and EVAL.
      train_op: the training Operation (or Tensor); required in TRAIN.
      eval_metric_ops: dict of name -> (value tensor, update op), or Keras ``Metric`` objects.
      export_outputs: dict of signature key -> ``ExportOutput`` (PREDICT / export).
      training_chief_hooks, training_hooks, evaluation_hooks, prediction_hooks: ``SessionRunHook`` lists.
      scaffold: a ``tf.compat.v1.train.Scaffold`` (default: a new one).
    Raises:
      ValueError, TypeError: a field is missing for the mode, has the wrong type, or is from another graph.
    """

    def __new__(
        cls,
        mode,
        predictions=None,
        loss=None,
        train_op=None,
        eval_metric_ops=None,
        export_outputs=None,
        training_chief_hooks=None,
        training_hooks=None,
        scaffold=None,
        evaluation_hooks=None,
        prediction_hooks=None,
    ):
        if mode not in ModeKeys.ALL:
            raise NpuArgumentError(f"mode must be one of {ModeKeys.ALL} (tf.estimator.ModeKeys), given: {mode!r}")
        graph = tf.compat.v1.get_default_graph()
        loss = _checked_loss(loss, mode, graph)
        train_op = _checked_train_op(train_op, mode, graph)
        predictions = _checked_predictions(predictions, mode, graph)
        eval_metric_ops = _checked_metrics(eval_metric_ops, graph)
        export_outputs = _checked_export_outputs(export_outputs)
        hooks = {
            name: _checked_hooks(name, value)
            for name, value in (
                ("training_chief_hooks", training_chief_hooks),
                ("training_hooks", training_hooks),
                ("evaluation_hooks", evaluation_hooks),
                ("prediction_hooks", prediction_hooks),
            )
        }
        if scaffold is None:
            scaffold = tf.compat.v1.train.Scaffold()
        elif not isinstance(scaffold, tf.compat.v1.train.Scaffold):
            raise NpuArgumentTypeError(f"scaffold must be a tf.compat.v1.train.Scaffold, given: {scaffold!r}")
        return super().__new__(
            cls,
            mode=mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=export_outputs,
            scaffold=scaffold,
            **hooks,
        )

    def _replace(self, **kwargs):
        if "mode" in kwargs and kwargs["mode"] != self.mode:
            raise NpuArgumentError("mode of an EstimatorSpec cannot be changed")
        fields = self._asdict()
        fields.update(kwargs)
        return type(self)(**fields)


def _check_graph(tensor_or_op, what, graph):
    if tensor_or_op.graph is not graph:
        raise NpuArgumentError(
            f"{what} must be from the default graph (the graph the Estimator built); "
            f"{tensor_or_op.name} is from another graph"
        )


def _checked_loss(loss, mode, graph):
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise NpuArgumentError(f"Missing loss: an EstimatorSpec in mode {mode!r} needs a loss")
        return None
    if not isinstance(loss, tf.Tensor):
        loss = tf.convert_to_tensor(loss)
    _check_graph(loss, "loss", graph)
    if loss.shape.rank is not None and loss.shape.num_elements() not in (1, None):
        raise NpuArgumentError(f"loss must be a scalar (shape [] or [1]), given shape {loss.shape}")
    if loss.shape.rank not in (0, None):
        with graph.as_default():
            loss = tf.reshape(loss, [])
    return loss


def _checked_train_op(train_op, mode, graph):
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise NpuArgumentError("Missing train_op: an EstimatorSpec in mode 'train' needs a train_op")
        return None
    if not isinstance(train_op, (tf.Operation, tf.Tensor)):
        raise NpuArgumentTypeError(f"train_op must be an Operation or Tensor, given: {train_op!r}")
    _check_graph(train_op, "train_op", graph)
    return train_op  # a Tensor stays one, as in TensorFlow 1.15: running it gives its value


def _checked_predictions(predictions, mode, graph):
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise NpuArgumentError("Missing predictions: an EstimatorSpec in mode 'infer' needs predictions")
        return None
    values = predictions.values() if isinstance(predictions, dict) else [predictions]
    for value in values:
        if not isinstance(value, (tf.Tensor, tf.SparseTensor)):
            raise NpuArgumentTypeError(f"predictions must be a Tensor or a dict of Tensors, given: {predictions!r}")
        _check_graph(value, "predictions", graph)
    return predictions


def _checked_metrics(eval_metric_ops, graph):
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise NpuArgumentTypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops!r}")
    checked = {}
    for name, metric in eval_metric_ops.items():
        if hasattr(metric, "result") and hasattr(metric, "updates"):  # a Keras Metric object
            with graph.as_default():
                metric = (metric.result(), tf.group(*metric.updates))
        if not isinstance(metric, tuple) or len(metric) != 2:
            raise NpuArgumentTypeError(
                f"eval_metric_ops[{name!r}] must be a (metric_tensor, update_op) tuple or a "
                f"Keras Metric, given: {metric!r}"
            )
        for part in metric:
            _check_graph(part, f"eval_metric_ops[{name!r}]", graph)
        checked[name] = metric
    return checked


def _checked_export_outputs(export_outputs):
    if export_outputs is None:
        return None
    if not isinstance(export_outputs, dict):
        raise NpuArgumentTypeError(f"export_outputs must be a dict, given: {export_outputs!r}")
    for key, value in export_outputs.items():
        if not isinstance(key, str):
            raise NpuArgumentError(f"export_outputs keys must be strings, given: {key!r}")
        if not isinstance(value, export_output_lib.ExportOutput):
            raise NpuArgumentTypeError(
                f"export_outputs[{key!r}] must be an ExportOutput (e.g. tf.estimator.export."
                f"PredictOutput), given: {value!r}"
            )
    return dict(export_outputs)


def _checked_hooks(name, hooks):
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, tf.compat.v1.train.SessionRunHook):
            raise NpuArgumentTypeError(f"All hooks must be SessionRunHook instances; {name} has {hook!r}")
    return hooks
