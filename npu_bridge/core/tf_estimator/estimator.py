"""``tf.estimator.Estimator`` on ``tf.compat.v1`` MonitoredSession, for TensorFlow versions without one.

Train, evaluate and predict each build a fresh graph: ``input_fn`` (on the CPU), then ``model_fn`` in the
mode, then run it in a (Monitored)Session restored from the newest checkpoint of ``model_dir``. Training saves
checkpoints and summaries as ``RunConfig`` asks, logs loss and steps per second, and stops at ``steps`` /
``max_steps`` or when the input ends; evaluation aggregates ``eval_metric_ops`` (plus the mean loss) over
``steps`` batches or the whole input and writes them as summaries; prediction yields per-example dicts.
What it logs, and at which verbosity, is TensorFlow's Estimator's (see ``run_log.py``).

Subclasses (``NPUEstimator``) adjust a run through a few methods: ``_create_saver``,
``_checkpoint_saver_hook`` and the ``_session_config`` / ``_steps_per_run`` / ``_saver_after_script_hooks``
attributes.

One file over 500 lines because it is one class, TensorFlow's ``Estimator`` with the methods subclasses override;
what stands apart from it already lives next to it (calling, export, run_log, warm_start).
"""

import contextlib
import copy
import os
import tempfile
import time

import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2
from tensorflow.python.training import training_util

from npu_bridge.core.runtime.errors import NotAvailableError, NpuArgumentError
from npu_bridge.core.tf_estimator import calling, export, run_log, warm_start
from npu_bridge.core.tf_estimator.mode_keys import ModeKeys
from npu_bridge.core.tf_estimator.run_config import RunConfig

v1 = tf.compat.v1
_PUBLIC_METHODS = (
    "train",
    "evaluate",
    "predict",
    "export_saved_model",
    "export_savedmodel",
    "get_variable_names",
    "get_variable_value",
    "latest_checkpoint",
    "model_dir",
    "config",
    "params",
    "model_fn",
)
_override_check = {"enabled": True}


@contextlib.contextmanager
def no_check_override():
    """Lets subclasses created inside this context override Estimator's public methods."""
    previous = _override_check["enabled"]
    _override_check["enabled"] = False
    try:
        yield
    finally:
        _override_check["enabled"] = previous


def _check_not_overridden(cls):
    if not _override_check["enabled"]:
        return
    overridden = sorted(
        name
        for name in _PUBLIC_METHODS
        if any(name in vars(base) for base in cls.__mro__[: cls.__mro__.index(Estimator)])
    )
    if overridden:
        raise NpuArgumentError(
            f"Subclasses of Estimator cannot override members of Estimator; {cls.__name__} "
            f"overrides {overridden} (wrap the construction in no_check_override() to allow it)"
        )


def default_session_config():
    """TensorFlow Estimator's session config: soft placement and one Grappler iteration."""
    config = v1.ConfigProto(allow_soft_placement=True)
    config.graph_options.rewrite_options.meta_optimizer_iterations = rewriter_config_pb2.RewriterConfig.ONE
    return config


class _StopAfterNEvalsHook(v1.train.SessionRunHook):
    """Stops evaluation after ``num_evals`` runs (None: at the end of the input) and logs progress."""

    def __init__(self, num_evals):
        self._num_evals = num_evals
        self._done = 0

    def after_run(self, run_context, run_values):
        self._done += 1
        if self._num_evals is None:
            return
        if self._done % max(1, self._num_evals // 10) == 0 or self._done == self._num_evals:
            run_log.info("Evaluation [%d/%d]", self._done, self._num_evals)
        if self._done >= self._num_evals:
            run_context.request_stop()


def _find_hook(hooks, cls):
    return next((hook for hook in hooks if isinstance(hook, cls)), None)


class Estimator:
    """Trains, evaluates and predicts with a ``model_fn``, as TensorFlow's ``tf.estimator.Estimator``.

    Args:
      model_fn: ``model_fn(features, labels, mode, params, config)`` returning an ``EstimatorSpec``; it may
        take any subset of those arguments (``features`` is required).
      model_dir: directory for checkpoints and summaries; defaults to ``config.model_dir``, else a new
        temporary directory.
      config: a ``RunConfig``.
      params: dict of hyper-parameters passed to ``model_fn`` (a deep copy).
      warm_start_from: a checkpoint/SavedModel path or ``WarmStartSettings`` to initialize variables from
        when ``model_dir`` has no checkpoint yet.
    Raises:
      ValueError: bad ``config``, conflicting model directories, or a model_fn signature that cannot work.
    """

    # TensorFlow's Estimator makes its checkpoint saver a chief-only hook, which a monitored session runs before the
    # others: the checkpoint of the first step exists when the script's hooks' after_create_session runs.
    _saver_after_script_hooks = False

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        _check_not_overridden(type(self))
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise NpuArgumentError(
                f"config must be an instance of RunConfig (tf.estimator.RunConfig), given: {config!r}"
            )
        model_dir = os.fspath(model_dir) if model_dir is not None else None
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise NpuArgumentError(
                f"model_dir is set both in the constructor ({model_dir!r}) and in RunConfig "
                f"({config.model_dir!r}), with different values"
            )
        model_dir = model_dir or config.model_dir
        if not model_dir:
            model_dir = tempfile.mkdtemp()
            run_log.warning("Using temporary folder as model directory: %s", model_dir)
        calling.verify_model_fn_args(model_fn, params)
        self._config = config.replace(model_dir=model_dir)
        self._model_dir = model_dir
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = warm_start.settings_from(warm_start_from)
        self._session_config = config.session_config or default_session_config()
        self._steps_per_run = 1

    model_dir = property(lambda self: self._model_dir, doc="The directory of checkpoints and summaries.")
    config = property(lambda self: copy.copy(self._config), doc="A copy of the RunConfig.")
    params = property(lambda self: copy.deepcopy(self._params), doc="A copy of the params dict.")

    @property
    def model_fn(self):
        """The model_fn, callable as ``model_fn(features, labels, mode, config)``."""

        def public_model_fn(features, labels, mode, config):
            return calling.call_model_fn(self._model_fn, features, labels, mode, self.params, config)

        return public_model_fn

    def eval_dir(self, name=None):
        """The directory ``evaluate(name=name)`` writes its summaries to: ``model_dir/eval`` (``eval_<name>``)."""
        return os.path.join(self._model_dir, "eval" if not name else f"eval_{name}")

    def latest_checkpoint(self):
        """Returns the newest checkpoint path in ``model_dir``, or None."""
        return tf.train.latest_checkpoint(self._model_dir)

    def get_variable_names(self):
        """Returns the names of the variables in the newest checkpoint.

        Raises:
          ValueError: there is no checkpoint yet.
        """
        return [name for name, _ in tf.train.list_variables(self._require_checkpoint())]

    def get_variable_value(self, name):
        """Returns the value of variable ``name`` in the newest checkpoint (a numpy array).

        Raises:
          ValueError: there is no checkpoint yet.
        """
        return tf.train.load_variable(self._require_checkpoint(), name)

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains until ``steps`` more steps, ``max_steps`` in total, or the end of the input.

        Args:
          input_fn: returns a ``tf.data.Dataset`` of (features, labels), or (features, labels) tensors.
          hooks: extra ``SessionRunHook``s.
          steps: number of steps to train from the current global step.
          max_steps: global step to stop at; training is skipped if a checkpoint is already there.
          saving_listeners: ``CheckpointSaverListener``s called around each checkpoint save.
        Returns:
          self.
        Raises:
          ValueError: both or non-positive ``steps`` / ``max_steps``, or listeners without checkpointing.
        """
        self._check_local("train")
        with run_log.visible_info():
            return self._train(input_fn, hooks, steps, max_steps, saving_listeners)

    def _train(self, input_fn, hooks, steps, max_steps, saving_listeners):
        if steps is not None and max_steps is not None:
            raise NpuArgumentError("Can not provide both steps and max_steps.")
        for name, value in (("steps", steps), ("max_steps", max_steps)):
            if value is not None and value <= 0:
                raise NpuArgumentError(f"Must specify {name} > 0, given: {value}")
        if max_steps is not None:
            current = self._checkpoint_global_step()
            if current is not None and current >= max_steps:
                run_log.info("Skipping training since max_steps has already saved.")
                return self
        hooks = list(hooks or [])
        if steps is not None or max_steps is not None:
            hooks.append(v1.train.StopAtStepHook(steps, max_steps))
        loss = self._train_model(input_fn, hooks, list(saving_listeners or []))
        run_log.info("Loss for final step: %s.", loss)
        return self

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates the model on ``steps`` batches (None: the whole input) of ``input_fn``.

        Args:
          input_fn: as for ``train``.
          steps: number of batches; None evaluates until the input ends.
          hooks: extra ``SessionRunHook``s.
          checkpoint_path: the checkpoint to evaluate (default: the newest in ``model_dir``).
          name: evaluations with different names write summaries to different directories (``eval_<name>``).
        Returns:
          dict of metric name -> value, with "loss" and "global_step".
        Raises:
          ValueError: ``steps`` is not positive.
        """
        if steps is not None and steps <= 0:
            raise NpuArgumentError(f"Must specify steps > 0, given: {steps}")
        with run_log.visible_info():
            results = self._evaluate(input_fn, steps, hooks, checkpoint_path, name)
            run_log.info(
                "Saving dict for global step %d: %s", int(results["global_step"]), run_log.dict_to_str(results)
            )
        return results

    def _evaluate(self, input_fn, steps, hooks, checkpoint_path, name):
        checkpoint_path = self._checkpoint_or_warn(checkpoint_path, "evaluate")
        with tf.Graph().as_default():
            self._set_random_seed()
            global_step = v1.train.get_or_create_global_step()
            features, labels, input_hooks = self._call_input_fn(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL)
            metrics = dict(spec.eval_metric_ops)
            if "loss" not in metrics:
                metrics["loss"] = v1.metrics.mean(spec.loss)
            update_op = tf.group(*[update for _, update in metrics.values()])
            final_ops = {key: value for key, (value, _) in metrics.items()}
            final_ops["global_step"] = global_step
            final_hook = v1.train.FinalOpsHook(final_ops)
            all_hooks = (
                input_hooks
                + list(hooks or [])
                + list(spec.evaluation_hooks)
                + [_StopAfterNEvalsHook(steps), final_hook]
            )
            self._ensure_saver(spec.scaffold)
            creator = v1.train.ChiefSessionCreator(
                scaffold=spec.scaffold, config=self._session_config, checkpoint_filename_with_path=checkpoint_path
            )
            start = time.time()
            run_log.info("Starting evaluation at %s", time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(start)))
            with v1.train.MonitoredSession(session_creator=creator, hooks=all_hooks) as session:
                while not session.should_stop():
                    session.run(update_op)
            run_log.info("Inference Time : %.5fs", time.time() - start)
            run_log.info("Finished evaluation at %s", time.strftime("%Y-%m-%d-%H:%M:%S"))
            results = final_hook.final_ops_values
            self._write_eval_summaries(results, name)
        return results

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        """Yields predictions for every element of ``input_fn``.

        Args:
          input_fn: returns features (or a Dataset of them; labels are ignored).
          predict_keys: names of the prediction dict entries to return (default: all).
          hooks: extra ``SessionRunHook``s.
          checkpoint_path: the checkpoint to use (default: the newest in ``model_dir``).
          yield_single_examples: yield one example at a time (True) or whole batches.
        Yields:
          A dict (or array, when the model predicts one tensor) per example or per batch.
        Raises:
          ValueError: an unknown ``predict_keys`` entry, or predictions of different batch sizes.
        """
        checkpoint_path = self._checkpoint_or_warn(checkpoint_path, "predict")
        with tf.Graph().as_default():
            self._set_random_seed()
            v1.train.get_or_create_global_step()
            features, _, input_hooks = self._call_input_fn(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT)
            predictions = _selected_predictions(spec.predictions, predict_keys)
            self._ensure_saver(spec.scaffold)
            creator = v1.train.ChiefSessionCreator(
                scaffold=spec.scaffold, config=self._session_config, checkpoint_filename_with_path=checkpoint_path
            )
            all_hooks = input_hooks + list(hooks or []) + list(spec.prediction_hooks)
            with v1.train.MonitoredSession(session_creator=creator, hooks=all_hooks) as session:
                while not session.should_stop():
                    batch = session.run(predictions)
                    if not yield_single_examples:
                        yield batch
                        continue
                    yield from _examples(batch)

    def export_saved_model(
        self,
        export_dir_base,
        serving_input_receiver_fn,
        assets_extra=None,
        as_text=False,
        checkpoint_path=None,
        experimental_mode=ModeKeys.PREDICT,
    ):
        """Exports the model as a SavedModel in a new timestamped directory under ``export_dir_base``.

        Returns:
          The export directory (bytes, as TensorFlow returns it).
        Raises:
          ValueError: there is no checkpoint to export.
        """
        with run_log.visible_info():
            return export.export_saved_model(
                self,
                export_dir_base,
                serving_input_receiver_fn,
                assets_extra,
                as_text,
                checkpoint_path,
                experimental_mode,
            )

    def export_savedmodel(
        self,
        export_dir_base,
        serving_input_receiver_fn,
        assets_extra=None,
        as_text=False,
        checkpoint_path=None,
        strip_default_attrs=False,
    ):
        """The TF1 name of ``export_saved_model``."""
        del strip_default_attrs  # default attrs are always stripped
        return self.export_saved_model(
            export_dir_base, serving_input_receiver_fn, assets_extra, as_text, checkpoint_path
        )

    # ---- what subclasses adjust -------------------------------------------------------------------

    def _create_saver(self):
        """The Saver used to restore and save checkpoints."""
        return v1.train.Saver(
            sharded=True,
            max_to_keep=self._config.keep_checkpoint_max,
            keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
            defer_build=True,
            save_relative_paths=True,
        )

    def _checkpoint_saver_hook(self, scaffold, listeners):
        """The hook that saves checkpoints while training; None when checkpointing is off."""
        config = self._config
        if not config.save_checkpoints_steps and not config.save_checkpoints_secs:
            return None
        hook = v1.train.CheckpointSaverHook(
            self._model_dir,
            save_secs=config.save_checkpoints_secs,
            save_steps=config.save_checkpoints_steps,
            scaffold=scaffold,
            listeners=listeners,
            save_graph_def=config.checkpoint_save_graph_def,
        )
        hook._set_steps_per_run(self._steps_per_run)
        return hook

    # ---- internals -----------------------------------------------------------------------------------

    def _check_local(self, what):
        if self._config.cluster_spec.jobs:
            raise NotAvailableError(
                f"Estimator.{what}: distributed Estimator training (a cluster in TF_CONFIG) is not available in "
                "npu_bridge; run one process per rank with RANK_SIZE/RANK_ID (or npu-run) instead"
            )

    def _params_for(self, mode):  # subclasses add per-mode entries (TPUEstimator's batch_size)
        """The params ``input_fn`` and ``model_fn`` get in ``mode``: a copy of ``params``."""
        return self.params

    def _as_estimator_spec(self, returned):
        """What ``model_fn`` returned, as an ``EstimatorSpec`` (subclasses convert their own spec types)."""
        return returned

    def _call_input_fn(self, input_fn, mode):
        return calling.call_input_fn(input_fn, mode, self._params_for(mode), self.config)

    def _call_model_fn(self, features, labels, mode):
        run_log.info("Calling model_fn.")
        spec = calling.call_model_fn(
            self._model_fn, features, labels, mode, self._params_for(mode), self.config, self._as_estimator_spec
        )
        run_log.info("Done calling model_fn.")
        return spec

    def _set_random_seed(self):
        if self._config.tf_random_seed is not None:
            v1.set_random_seed(self._config.tf_random_seed)

    def _ensure_saver(self, scaffold):
        if scaffold.saver is None and not tf.compat.v1.get_collection(v1.GraphKeys.SAVERS):
            v1.add_to_collection(v1.GraphKeys.SAVERS, self._create_saver())

    def _require_checkpoint(self):
        checkpoint = self.latest_checkpoint()
        if checkpoint is None:
            raise NpuArgumentError(f"Could not find trained model in model_dir: {self._model_dir}")
        return checkpoint

    def _checkpoint_or_warn(self, checkpoint_path, what):
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if checkpoint_path is None:
            run_log.info(
                "Could not find trained model in model_dir: %s, running initialization to %s.", self._model_dir, what
            )
        return checkpoint_path

    def _checkpoint_global_step(self):
        checkpoint = self.latest_checkpoint()
        if checkpoint is None:
            return None
        try:
            return int(tf.train.load_variable(checkpoint, v1.GraphKeys.GLOBAL_STEP))
        except (tf.errors.NotFoundError, ValueError):
            return None

    def _train_model(self, input_fn, hooks, saving_listeners):
        with tf.Graph().as_default() as graph:
            self._set_random_seed()
            global_step = v1.train.get_or_create_global_step(graph)
            features, labels, input_hooks = self._call_input_fn(input_fn, ModeKeys.TRAIN)
            # The step read by hooks happens before the train op changes it (TensorFlow's Estimator does the same).
            with tf.control_dependencies([training_util._get_or_create_global_step_read()]):
                spec = self._call_model_fn(features, labels, ModeKeys.TRAIN)
            return self._train_with_spec(spec, global_step, input_hooks + hooks, saving_listeners)

    def _train_with_spec(self, spec, global_step, hooks, saving_listeners):
        config = self._config
        self._ensure_saver(spec.scaffold)
        v1.summary.scalar("loss", spec.loss)
        hooks = hooks + list(spec.training_hooks) + [v1.train.NanTensorHook(spec.loss)]
        chief_hooks = list(spec.training_chief_hooks)
        if config.log_step_count_steps:
            every_n_runs = max(1, config.log_step_count_steps // self._steps_per_run)
            hooks.append(
                v1.train.LoggingTensorHook({"loss": spec.loss, "step": global_step}, every_n_iter=every_n_runs)
            )
            counter = v1.train.StepCounterHook(every_n_steps=config.log_step_count_steps, output_dir=self._model_dir)
            counter._set_steps_per_run(self._steps_per_run)
            chief_hooks.append(counter)
        if config.save_summary_steps:
            chief_hooks.append(
                v1.train.SummarySaverHook(
                    save_steps=config.save_summary_steps, output_dir=self._model_dir, scaffold=spec.scaffold
                )
            )
        existing = _find_hook(hooks + chief_hooks, v1.train.CheckpointSaverHook)
        if existing is not None:
            existing._listeners.extend(saving_listeners)
        else:
            saver_hook = self._checkpoint_saver_hook(spec.scaffold, saving_listeners)
            if saver_hook is None and saving_listeners:
                raise NpuArgumentError(
                    "saving_listeners need checkpoints: set save_checkpoints_steps or "
                    "save_checkpoints_secs in the RunConfig"
                )
            if saver_hook is not None:
                (hooks if self._saver_after_script_hooks else chief_hooks).append(saver_hook)
        if self._warm_start_settings is not None:
            run_log.info("Warm-starting from: %s", self._warm_start_settings.ckpt_to_initialize_from)
            warm_start.apply(self._warm_start_settings)
        loss = None
        with v1.train.MonitoredTrainingSession(
            master=config.master,
            is_chief=True,
            checkpoint_dir=self._model_dir,
            scaffold=spec.scaffold,
            hooks=hooks,
            chief_only_hooks=chief_hooks,
            save_checkpoint_secs=None,
            save_checkpoint_steps=None,
            save_summaries_steps=None,
            save_summaries_secs=None,
            config=self._session_config,
            log_step_count_steps=None,
            max_wait_secs=config.session_creation_timeout_secs,
        ) as session:
            while not session.should_stop():
                _, loss = session.run([spec.train_op, spec.loss])
        return loss

    def _write_eval_summaries(self, results, name):
        directory = self.eval_dir(name)
        summary = v1.Summary()
        for key, value in results.items():
            if key != "global_step" and getattr(value, "size", 1) == 1:
                try:
                    summary.value.add(tag=key, simple_value=float(value))
                except (TypeError, ValueError):
                    continue
        writer = v1.summary.FileWriterCache.get(directory)
        writer.add_summary(summary, int(results["global_step"]))
        writer.flush()


def _selected_predictions(predictions, predict_keys):
    if predict_keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise NpuArgumentError("predict_keys needs the model_fn to return a dict of predictions")
    keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
    missing = [key for key in keys if key not in predictions]
    if missing:
        raise NpuArgumentError(f"Expected to find {missing} in predictions, which has {sorted(predictions)}")
    return {key: predictions[key] for key in keys}


def _examples(batch):
    if not isinstance(batch, dict):
        yield from batch
        return
    sizes = {key: len(value) for key, value in batch.items()}
    if len(set(sizes.values())) > 1:
        raise NpuArgumentError(
            f"Batch length of predictions should be same; got {sizes}. To return whole batches "
            "use yield_single_examples=False"
        )
    for i in range(next(iter(sizes.values()), 0)):
        yield {key: value[i] for key, value in batch.items()}
