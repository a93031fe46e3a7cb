"""``tf.estimator.TrainSpec``, ``EvalSpec`` and ``train_and_evaluate`` (local: one process trains and evaluates).

Training runs once; after each checkpoint it saves (but not the one written when the session starts) the model
is evaluated if ``throttle_secs`` passed since the last evaluation, and at the end of training the final
checkpoint is evaluated unless it already was. Exporters run after every evaluation.
"""

import collections
import os
import time

import tensorflow as tf

from npu_bridge.core.runtime.errors import NotAvailableError, NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf_estimator.estimator import Estimator
from npu_bridge.core.tf_estimator.export import Exporter


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """What to train on and for how long.

    Raises:
      TypeError: ``input_fn`` is not callable or a hook is not a SessionRunHook.
      ValueError: ``max_steps`` is not positive.
    """

    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        if not callable(input_fn):
            raise NpuArgumentTypeError(f"TrainSpec.input_fn must be callable, given: {input_fn!r}")
        if max_steps is not None and max_steps <= 0:
            raise NpuArgumentError(f"Must specify max_steps > 0, given: {max_steps}")
        hooks = tuple(hooks or ())
        for hook in hooks:
            if not isinstance(hook, tf.compat.v1.train.SessionRunHook):
                raise NpuArgumentTypeError(f"All hooks must be SessionRunHook instances, given: {hook!r}")
        return super().__new__(cls, input_fn, max_steps, hooks, tuple(saving_listeners or ()))


class EvalSpec(
    collections.namedtuple(
        "EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs", "throttle_secs"]
    )
):
    """What to evaluate on, how often, and which exporters to run.

    Raises:
      TypeError: ``input_fn`` is not callable, a hook or exporter has the wrong type.
      ValueError: non-positive ``steps``, negative delays, duplicate exporter names.
    """

    def __new__(
        cls, input_fn, steps=100, name=None, hooks=None, exporters=None, start_delay_secs=120, throttle_secs=600
    ):
        if not callable(input_fn):
            raise NpuArgumentTypeError(f"EvalSpec.input_fn must be callable, given: {input_fn!r}")
        if steps is not None and steps <= 0:
            raise NpuArgumentError(f"Must specify steps > 0, given: {steps}")
        for what, value in (("start_delay_secs", start_delay_secs), ("throttle_secs", throttle_secs)):
            if value < 0:
                raise NpuArgumentError(f"Must specify {what} >= 0, given: {value}")
        hooks = tuple(hooks or ())
        for hook in hooks:
            if not isinstance(hook, tf.compat.v1.train.SessionRunHook):
                raise NpuArgumentTypeError(f"All hooks must be SessionRunHook instances, given: {hook!r}")
        if isinstance(exporters, Exporter):
            exporters = (exporters,)
        exporters = tuple(exporters or ())
        for exporter in exporters:
            if not isinstance(exporter, Exporter):
                raise NpuArgumentTypeError(f"exporters must be Exporter instances, given: {exporter!r}")
        names = [exporter.name for exporter in exporters]
        if len(set(names)) != len(names):
            raise NpuArgumentError(f"exporters must have unique names, given: {names}")
        return super().__new__(cls, input_fn, steps, name, hooks, exporters, start_delay_secs, throttle_secs)


class _Evaluator:
    """Evaluates and exports a checkpoint; remembers the last result."""

    def __init__(self, estimator, eval_spec):
        self._estimator = estimator
        self._spec = eval_spec
        self.last_step = None
        self.last_time = None
        self.result = None
        self.export_results = []

    def evaluate(self, is_final):
        self.result = self._estimator.evaluate(
            self._spec.input_fn,
            steps=self._spec.steps,
            hooks=self._spec.hooks,
            checkpoint_path=self._estimator.latest_checkpoint(),
            name=self._spec.name,
        )
        self.last_step = int(self.result["global_step"])
        self.last_time = time.time()
        self.export(is_final)

    def export(self, is_final):
        checkpoint = self._estimator.latest_checkpoint()
        self.export_results = [
            exporter.export(
                self._estimator,
                os.path.join(self._estimator.model_dir, "export", exporter.name),
                checkpoint,
                self.result,
                is_final,
            )
            for exporter in self._spec.exporters
        ]


class _EvaluateAfterSave(tf.compat.v1.train.CheckpointSaverListener):
    def __init__(self, evaluator, throttle_secs):
        self._evaluator = evaluator
        self._throttle_secs = throttle_secs
        self._first_save = True

    def after_save(self, session, global_step_value):
        if self._first_save:  # the checkpoint saved when the session starts
            self._first_save = False
            return
        last = self._evaluator.last_time
        if last is None or time.time() - last >= self._throttle_secs:
            self._evaluator.evaluate(is_final=False)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains ``estimator`` and evaluates (and exports) it along the way and at the end.

    Returns:
      (eval result dict, list of export results) of the final evaluation.
    Raises:
      TypeError: arguments of the wrong types.
      NotAvailableError: TF_CONFIG describes a cluster (distributed Estimator training is not available here).
    """
    if not isinstance(estimator, Estimator):
        raise NpuArgumentTypeError(f"estimator must be a tf.estimator.Estimator, given: {estimator!r}")
    if not isinstance(train_spec, TrainSpec):
        raise NpuArgumentTypeError(f"train_spec must be a tf.estimator.TrainSpec, given: {train_spec!r}")
    if not isinstance(eval_spec, EvalSpec):
        raise NpuArgumentTypeError(f"eval_spec must be a tf.estimator.EvalSpec, given: {eval_spec!r}")
    if estimator.config.cluster_spec.jobs:
        raise NotAvailableError(
            "train_and_evaluate: distributed mode (a cluster in TF_CONFIG) is not available "
            "in npu_bridge; run it locally, one process per rank"
        )
    evaluator = _Evaluator(estimator, eval_spec)
    listeners = list(train_spec.saving_listeners)
    config = estimator.config
    if config.save_checkpoints_steps or config.save_checkpoints_secs:
        listeners.append(_EvaluateAfterSave(evaluator, eval_spec.throttle_secs))
    estimator.train(
        train_spec.input_fn, hooks=train_spec.hooks, max_steps=train_spec.max_steps, saving_listeners=listeners
    )
    final_step = estimator._checkpoint_global_step()
    if evaluator.result is None or evaluator.last_step != final_step:
        evaluator.evaluate(is_final=True)
    elif eval_spec.exporters:
        evaluator.export(is_final=True)
    return evaluator.result, evaluator.export_results
