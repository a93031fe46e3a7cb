"""``tf.estimator.experimental``: TensorFlow 1.15's early-stopping hooks.

A hook made here reads the evaluation summaries ``Estimator.evaluate`` wrote (the event files of
``estimator.eval_dir()``), every ``run_every_secs`` seconds or ``run_every_steps`` steps of training, and stops
training when its condition holds: a metric crossed a threshold (``stop_if_higher_hook``, ``stop_if_lower_hook``)
or has not improved over its best value for a number of steps (``stop_if_no_decrease_hook``,
``stop_if_no_increase_hook``). ``make_early_stopping_hook`` takes any condition.

Difference from TensorFlow 1.15: there the chief alone evaluated the condition and told the other workers through
a ``signal_early_stopping`` variable; here every task evaluates it (npu_bridge's Estimator trains in one process),
so no variable is added to the graph and checkpoints hold the same variables with or without the hook.
"""

import collections
import glob
import operator
import os

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, NpuKeyError
from npu_bridge.core.tf_estimator import missing, run_log
from npu_bridge.core.tf_estimator.estimator import Estimator

__all__ = [
    "make_early_stopping_hook",
    "read_eval_metrics",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
]

_v1 = tf.compat.v1


def read_eval_metrics(eval_dir):
    """The scalar summaries of the event files in ``eval_dir``, by global step.

    Args:
      eval_dir: the evaluation directory (``estimator.eval_dir()``); a missing directory has no metrics.
    Returns:
      An ``OrderedDict`` {global step: {tag: value}}, by increasing step.
    """
    by_step = collections.defaultdict(dict)
    for path in sorted(glob.glob(os.path.join(os.fspath(eval_dir), "events.out.tfevents.*"))):
        for event in _v1.train.summary_iterator(path):
            if not event.HasField("summary"):
                continue
            values = {value.tag: value.simple_value for value in event.summary.value if value.HasField("simple_value")}
            if values:
                by_step[event.step].update(values)
    return collections.OrderedDict(sorted(by_step.items()))


class _StopOnPredicateHook(_v1.train.SessionRunHook):
    """Requests a stop of training when ``should_stop_fn()`` returns True, asked on the timer's schedule."""

    def __init__(self, should_stop_fn, run_every_secs, run_every_steps):
        self._should_stop_fn = should_stop_fn
        self._timer = _v1.train.SecondOrStepTimer(every_secs=run_every_secs, every_steps=run_every_steps)
        self._global_step = None

    def begin(self):
        self._global_step = _v1.train.get_global_step()
        if self._global_step is None:
            raise NpuArgumentError("the early-stopping hook needs a global step in the graph (none was created)")

    def before_run(self, run_context):
        return _v1.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if not self._timer.should_trigger_for_step(step):
            return
        self._timer.update_last_triggered_step(step)
        if self._should_stop_fn():
            run_log.info("Requesting early stopping at global step %d", step)
            run_context.request_stop()


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60, run_every_steps=None):
    """A training hook that stops training when ``should_stop_fn()`` returns True.

    Args:
      estimator: the ``tf.estimator.Estimator`` being trained.
      should_stop_fn: a callable of no arguments returning a bool.
      run_every_secs: ask ``should_stop_fn`` at most this often (seconds); exclusive with ``run_every_steps``.
      run_every_steps: ask it every this many global steps instead.
    Returns:
      A ``SessionRunHook`` for ``estimator.train(hooks=...)`` or ``TrainSpec(hooks=...)``.
    Raises:
      NpuArgumentTypeError: ``estimator`` is not an Estimator or ``should_stop_fn`` is not callable.
      NpuArgumentError: both or neither of ``run_every_secs`` and ``run_every_steps`` are set.
    """
    if not isinstance(estimator, Estimator):
        raise NpuArgumentTypeError(f"estimator must be a tf.estimator.Estimator, given: {type(estimator).__name__}")
    if not callable(should_stop_fn):
        raise NpuArgumentTypeError(f"should_stop_fn must be callable, given: {should_stop_fn!r}")
    if (run_every_secs is None) == (run_every_steps is None):
        raise NpuArgumentError(
            "exactly one of run_every_secs and run_every_steps must be set, given: "
            f"run_every_secs={run_every_secs!r}, run_every_steps={run_every_steps!r}"
        )
    return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)


def _metric(metrics, name, step, eval_dir):
    try:
        return metrics[name]
    except KeyError:
        raise NpuKeyError(
            f"metric {name!r} is not among the evaluation summaries of step {step} in {eval_dir!r} "
            f"(they are: {sorted(metrics)})"
        ) from None


def _threshold_hook(estimator, metric_name, threshold, crossed, eval_dir, min_steps, run_every_secs, run_every_steps):
    eval_dir = _eval_dir(estimator, eval_dir)

    def should_stop():
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step >= min_steps and crossed(_metric(metrics, metric_name, step, eval_dir), threshold):
                run_log.info("At step %d, metric %r crossed the threshold %s", step, metric_name, threshold)
                return True
        return False

    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def _no_improvement_hook(
    estimator, metric_name, max_steps, better, eval_dir, min_steps, run_every_secs, run_every_steps
):
    eval_dir = _eval_dir(estimator, eval_dir)

    def should_stop():
        best_value = best_step = None
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = _metric(metrics, metric_name, step, eval_dir)
            if best_value is None or better(value, best_value):
                best_value, best_step = value, step
            if step - best_step >= max_steps:
                run_log.info(
                    "No improvement of metric %r in %d steps (best %s at step %d): stopping",
                    metric_name,
                    step - best_step,
                    best_value,
                    best_step,
                )
                return True
        return False

    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def _eval_dir(estimator, eval_dir):
    if not isinstance(estimator, Estimator):
        raise NpuArgumentTypeError(f"estimator must be a tf.estimator.Estimator, given: {type(estimator).__name__}")
    return os.fspath(eval_dir) if eval_dir is not None else estimator.eval_dir()


def stop_if_higher_hook(
    estimator, metric_name, threshold, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None
):
    """A hook that stops training once an evaluation at step >= ``min_steps`` had ``metric_name`` > ``threshold``.

    Args:
      estimator: the ``tf.estimator.Estimator`` being trained.
      metric_name: the evaluation metric (a key of ``evaluate``'s result, e.g. "loss").
      threshold: the value to exceed.
      eval_dir: the directory of the evaluation summaries; default ``estimator.eval_dir()``.
      min_steps: evaluations at lower global steps are ignored.
      run_every_secs, run_every_steps: how often the summaries are read (see ``make_early_stopping_hook``).
    Returns:
      A ``SessionRunHook``; reading the summaries raises ``NpuKeyError`` when an evaluation lacks the metric.
    """
    return _threshold_hook(
        estimator, metric_name, threshold, operator.gt, eval_dir, min_steps, run_every_secs, run_every_steps
    )


def stop_if_lower_hook(
    estimator, metric_name, threshold, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None
):
    """A hook that stops training once an evaluation at step >= ``min_steps`` had ``metric_name`` < ``threshold``.

    Arguments and result as ``stop_if_higher_hook``.
    """
    return _threshold_hook(
        estimator, metric_name, threshold, operator.lt, eval_dir, min_steps, run_every_secs, run_every_steps
    )


def stop_if_no_decrease_hook(
    estimator,
    metric_name,
    max_steps_without_decrease,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    """A hook that stops training when ``metric_name`` has not decreased below its lowest value (of evaluations at
    steps >= ``min_steps``) for ``max_steps_without_decrease`` global steps.

    Args:
      estimator: the ``tf.estimator.Estimator`` being trained.
      metric_name: the evaluation metric (a key of ``evaluate``'s result, e.g. "loss").
      max_steps_without_decrease: the number of global steps between the best evaluation and a later one that
        stops training.
      eval_dir, min_steps, run_every_secs, run_every_steps: as ``stop_if_higher_hook``.
    Returns:
      A ``SessionRunHook``.
    """
    return _no_improvement_hook(
        estimator,
        metric_name,
        max_steps_without_decrease,
        operator.lt,
        eval_dir,
        min_steps,
        run_every_secs,
        run_every_steps,
    )


def stop_if_no_increase_hook(
    estimator,
    metric_name,
    max_steps_without_increase,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    """A hook that stops training when ``metric_name`` has not increased above its highest value for
    ``max_steps_without_increase`` global steps. Arguments and result as ``stop_if_no_decrease_hook``.
    """
    return _no_improvement_hook(
        estimator,
        metric_name,
        max_steps_without_increase,
        operator.gt,
        eval_dir,
        min_steps,
        run_every_secs,
        run_every_steps,
    )


__getattr__ = missing.module_getattr("tf.estimator.experimental", __all__)
