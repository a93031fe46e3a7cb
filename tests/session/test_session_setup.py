"""The extension point capabilities use: setup steps edit a bridged session's plan; run hooks see its runs."""

import types

import pytest
import tensorflow as tf
from helpers.config import npu_config

from npu_bridge.core.session import planner, repeated_runs, step_api
from npu_bridge.core.session.steps import precision

v1 = tf.compat.v1


@pytest.fixture
def add_step(monkeypatch):
    """Adds ``function(plan)`` as a setup step after the precision step, for this test only."""
    steps = planner.step_modules()
    at = steps.index(precision) + 1

    def add(function):
        added = steps[:at] + (types.SimpleNamespace(setup=function),) + steps[at:]
        monkeypatch.setattr(planner, "step_modules", lambda: added)
        return function

    return add


class Recorder(step_api.RunHook):
    def __init__(self):
        self.events = []

    def before_run(self, context):
        context.options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
        context.run_metadata = v1.RunMetadata()
        self.events.append(("before", context.step))

    def after_run(self, context, results):
        self.events.append(("after", context.step, results, len(context.run_metadata.step_stats.dev_stats) > 0))

    def end(self, session):
        self.events.append(("end",))


def test_steps_edit_the_plan_and_hooks_see_every_run(add_step):
    recorder = Recorder()
    seen_options = []

    @add_step
    def step(plan):
        seen_options.append(plan.options.get("precision_mode"))
        plan.config.intra_op_parallelism_threads = 1
        plan.run_hooks.append(recorder)

    graph = tf.Graph()
    with graph.as_default():
        value = tf.constant(2.0) * 3.0
    sess = v1.Session(graph=graph, config=npu_config(precision_mode="force_fp32"))
    with sess:
        assert sess._config.intra_op_parallelism_threads == 1
        assert sess.run(value) == 6.0
        assert sess.run(value) == 6.0
    sess.close()
    assert seen_options == ["force_fp32"]
    assert recorder.events == [("before", 0), ("after", 0, 6.0, True), ("before", 1), ("after", 1, 6.0, True), ("end",)]


def test_sessions_without_hooks_are_not_wrapped():
    graph = tf.Graph()
    with graph.as_default():
        tf.constant(1.0)
    with v1.Session(graph=graph, config=npu_config()) as sess:
        # only repeated runs are made callables (npu_bridge.core.session.repeated_runs); no hook wraps run
        assert "close" not in vars(sess) and "_make_callable_from_options" not in vars(sess)
        assert vars(sess)["run"].__module__ == repeated_runs.__name__
    with v1.Session(graph=graph) as sess:
        assert "run" not in vars(sess)
