"""``keras_to_npu.model_to_npu_estimator``: an NPUEstimator that trains a compiled Keras model.

The estimator's model_fn clones the Keras model into the Estimator's graph and calls it on the features;
the loss is the compiled loss (averaged over the batch, times the compiled loss weights) plus the model's
regularization losses, with the op names TensorFlow 1.15's Keras gave them (``loss/add``), the train op
applies a copy of the compiled optimizer (a legacy Keras optimizer, as graph mode needs) and advances the
global step, and evaluation reports the mean loss and the compiled metrics. The Keras model's current weights
are saved to ``<model_dir>/keras/keras_model.ckpt`` and the estimator warm-starts from them, so training
continues from where the Keras model is.
"""

import os

import tensorflow as tf

from npu_bridge.core.npu_estimator.estimator import NPUEstimator, NPUEstimatorSpec, default_model_dir
from npu_bridge.core.npu_estimator.run_config import NPURunConfig
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf_estimator.mode_keys import ModeKeys
from npu_bridge.core.tf_estimator.warm_start import WarmStartSettings

v1 = tf.compat.v1
_CHECKPOINT_FORMATS = ("saver", "checkpoint")


def _by_name(value, names, what):
    """Maps a tensor or a dict keyed by ``names`` to the list of tensors in ``names`` order."""
    if isinstance(value, dict):
        missing = [name for name in names if name not in value]
        if missing:
            raise NpuArgumentError(f"{what} lack the Keras model's {missing}; they have {sorted(value)}")
        return [value[name] for name in names]
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(values) != len(names):
        raise NpuArgumentError(f"the Keras model has {len(names)} {what} ({names}), got {len(values)}")
    return values


def _per_output(setting, output_names):
    """A compile() setting given once, as a list, or as a dict by output name -> list in output order."""
    if isinstance(setting, dict):
        return [setting.get(name) for name in output_names]
    if isinstance(setting, (list, tuple)) and len(output_names) > 1:
        return list(setting)
    return [setting] * len(output_names)


def _one_per_output(setting, output_names, what):
    """A compile() setting with one value per output (``loss``, ``loss_weights``), given once, as a list or as a
    dict by output name -> list in output order."""
    if isinstance(setting, (list, tuple)):
        if len(setting) != len(output_names):
            raise NpuArgumentError(
                f"the Keras model was compiled with {len(setting)} {what} for its {len(output_names)} outputs "
                f"{output_names}"
            )
        return list(setting)
    return _per_output(setting, output_names)


def _metric_fn(metric, loss, output):
    """The per-example function of a compiled metric; "accuracy" is chosen as Keras chooses it."""
    if metric in ("accuracy", "acc"):
        loss_name = loss if isinstance(loss, str) else getattr(loss, "__name__", "")
        if "sparse_categorical" in loss_name:
            return tf.keras.metrics.sparse_categorical_accuracy
        if "binary" in loss_name or output.shape[-1] == 1:
            return tf.keras.metrics.binary_accuracy
        return tf.keras.metrics.categorical_accuracy
    return tf.keras.metrics.get(metric)


def _compiled_metrics(keras_model):
    """The ``metrics`` argument the model was compiled with (graph-mode and eager-mode Keras keep it apart)."""
    if getattr(keras_model, "_compile_metrics", None) is not None:
        return keras_model._compile_metrics
    container = getattr(keras_model, "compiled_metrics", None)
    return getattr(container, "_user_metrics", None) or []


def _total_loss(losses, weights, output_names, targets, outputs, layer_losses):
    """The compiled loss as TensorFlow 1.15's Keras built it, ops and names alike (scripts fetch ``loss/add:0``):
    under ``loss/``, each output's mean loss under ``<output>_loss/``, times its weight, summed in output order,
    plus the sum of the layers' regularization losses."""
    with tf.name_scope("loss"):
        total = None
        for fn, weight, name, target, output in zip(losses, weights, output_names, targets, outputs):
            if fn is None:
                continue
            with tf.name_scope(f"{name}_loss"):
                output_loss = tf.reduce_mean(tf.keras.losses.get(fn)(target, output))
            term = (1.0 if weight is None else weight) * output_loss
            total = term if total is None else total + term
        if total is None:
            total = tf.constant(0.0)
        if layer_losses:
            total += tf.add_n(layer_losses)
    return total


def _of_this_call(model, inputs):
    """(regularization losses, state updates) of the model's call on ``inputs`` and those of no input: the clone
    was also built on placeholders of its own, whose batch-normalization updates and activity losses would need
    feeding (TensorFlow 1.15's Keras summed the same two)."""
    if not hasattr(model, "get_updates_for"):  # layers that do not track them per input
        return list(model.losses), list(model.updates)
    losses = model.get_losses_for(None) + model.get_losses_for(inputs)
    return losses, model.get_updates_for(None) + model.get_updates_for(inputs)


def _keras_model_fn(keras_model):
    input_names, output_names = list(keras_model.input_names), list(keras_model.output_names)
    losses = _one_per_output(keras_model.loss, output_names, "losses")
    weights = _one_per_output(getattr(keras_model, "loss_weights", None), output_names, "loss weights")
    metrics = _per_output(_compiled_metrics(keras_model), output_names)
    optimizer_config = (type(keras_model.optimizer), keras_model.optimizer.get_config())

    def model_fn(features, labels, mode):
        model = tf.keras.models.clone_model(keras_model)
        inputs = _by_name(features, input_names, "features")
        outputs = model(inputs if len(inputs) > 1 else inputs[0], training=mode == ModeKeys.TRAIN)
        outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        if mode == ModeKeys.PREDICT:
            return NPUEstimatorSpec(mode, predictions=dict(zip(output_names, outputs)))
        targets = _by_name(labels, output_names, "labels")
        layer_losses, layer_updates = _of_this_call(model, inputs)
        loss = _total_loss(losses, weights, output_names, targets, outputs, layer_losses)
        if mode == ModeKeys.EVAL:
            metric_ops = {}
            for names, target, output, loss_fn in zip(metrics, targets, outputs, losses):
                for metric in names or []:
                    name = metric if isinstance(metric, str) else getattr(metric, "__name__", str(metric))
                    values = _metric_fn(metric, loss_fn, output)(target, output)
                    metric_ops[name] = v1.metrics.mean(values)
            return NPUEstimatorSpec(mode, loss=loss, eval_metric_ops=metric_ops)
        optimizer = optimizer_config[0].from_config(optimizer_config[1])
        updates = optimizer.get_updates(loss, model.trainable_weights) + layer_updates
        with tf.control_dependencies(updates):
            train_op = v1.assign_add(v1.train.get_global_step(), 1)
        return NPUEstimatorSpec(mode, loss=loss, train_op=train_op.op)

    return model_fn


def _save_keras_weights(keras_model, path):
    """Saves the Keras model's weights as a TF checkpoint with the variable names the model_fn creates."""
    weights = keras_model.get_weights()
    with tf.Graph().as_default():
        model = tf.keras.models.clone_model(keras_model)
        saver = v1.train.Saver(model.weights)
        with v1.Session() as session:
            session.run(
                [v.initializer for v in model.weights],
                {v.initializer.inputs[1]: value for v, value in zip(model.weights, weights)},
            )
            tf.io.gfile.makedirs(os.path.dirname(path))
            return saver.save(session, path)


def model_to_npu_estimator(
    keras_model=None,
    keras_model_path=None,
    custom_objects=None,
    model_dir=None,
    checkpoint_format="saver",
    config=None,
    job_start_file="",
):
    """Returns an ``NPUEstimator`` that trains, evaluates and predicts with a compiled Keras model.

    Args:
      keras_model: a compiled ``tf.keras`` model (give this or ``keras_model_path``).
      keras_model_path: path of a saved, compiled Keras model.
      custom_objects: custom layers, losses, ... needed to load ``keras_model_path``.
      model_dir: the estimator's directory (or ``config.model_dir``).
      checkpoint_format: "saver" or "checkpoint" (both write TensorFlow checkpoints here).
      config: an ``NPURunConfig`` (default: ``NPURunConfig(model_dir=model_dir)``).
      job_start_file: as ``NPUEstimator``.
    Raises:
      ValueError: neither or both models given, the model is not compiled (or not with a legacy optimizer), or a
        bad checkpoint_format.
    """
    if (keras_model is None) == (keras_model_path is None):
        raise NpuArgumentError("Either `keras_model` or `keras_model_path` needs to be provided.")
    if checkpoint_format not in _CHECKPOINT_FORMATS:
        raise NpuArgumentError(f"checkpoint_format must be one of {_CHECKPOINT_FORMATS}, got {checkpoint_format!r}")
    if keras_model_path is not None:
        keras_model = tf.keras.models.load_model(keras_model_path, custom_objects=custom_objects)
    if getattr(keras_model, "optimizer", None) is None or getattr(keras_model, "loss", None) is None:
        raise NpuArgumentError(
            "The given keras model has not been compiled yet. Please compile the model with "
            "`model.compile()` before calling `model_to_npu_estimator()`."
        )
    if not hasattr(keras_model.optimizer, "get_updates"):
        raise NpuArgumentError(
            "model_to_npu_estimator trains in graph mode, which needs a legacy Keras optimizer "
            "(tf.compat.v1.keras.optimizers.* or tf.keras.optimizers.legacy.*); the model is "
            f"compiled with {type(keras_model.optimizer).__module__}."
            f"{type(keras_model.optimizer).__name__}"
        )
    config = config if config is not None else NPURunConfig(model_dir=model_dir)
    model_dir = model_dir or config.model_dir or default_model_dir()
    warm_start_from = None
    if tf.train.latest_checkpoint(model_dir) is None:
        warm_start_from = WarmStartSettings(
            _save_keras_weights(keras_model, os.path.join(model_dir, "keras", "keras_model.ckpt"))
        )
        log.logger.info(
            "model_to_npu_estimator: warm-starting from the Keras model's weights in %s",
            warm_start_from.ckpt_to_initialize_from,
        )
    return NPUEstimator(
        _keras_model_fn(keras_model),
        model_dir=model_dir,
        config=config,
        job_start_file=job_start_file,
        warm_start_from=warm_start_from,
    )
