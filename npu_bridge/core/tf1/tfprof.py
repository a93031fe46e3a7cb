"""``tf.contrib.tfprof`` of TensorFlow 1.15 (and its ``model_analyzer``) on TensorFlow 2.21's ``tf.compat.v1.profiler``.

``print_model_analysis(graph, run_meta, op_log, tfprof_cmd, tfprof_options)`` is ``tf.compat.v1.profiler.profile``
with 1.15's argument names; the option dictionaries are 1.15's; ``advise``, ``Profiler`` and ``ALL_ADVICE`` are
TensorFlow's. ``ProfileContext``, which TensorFlow 2.21 dropped, is written here: inside it, every
``Session.run`` counts a step; the steps to trace run with ``RunOptions.FULL_TRACE`` and their run metadata go to
``profiler``; at the dump steps the profile is written to ``<profile_dir>/profile_<step>``.
"""

import contextlib
import os
import random
import sys
import threading

import tensorflow as tf
from tensorflow.python.client import session as session_lib
from tensorflow.python.profiler import model_analyzer, tfprof_logger

from npu_bridge.core.runtime.errors import NpuArgumentError

Profiler = model_analyzer.Profiler
ALL_ADVICE = model_analyzer.ALL_ADVICE

__all__ = [
    "ALL_ADVICE",
    "FLOAT_OPS_OPTIONS",
    "PRINT_ALL_TIMING_MEMORY",
    "ProfileContext",
    "Profiler",
    "TRAINABLE_VARS_PARAMS_STAT_OPTIONS",
    "advise",
    "print_model_analysis",
    "tfprof_logger",
]


def _options(select, order_by, account_type_regexes, min_bytes=0, min_micros=0, min_float_ops=0):
    return {
        "max_depth": 10000,
        "min_bytes": min_bytes,
        "min_micros": min_micros,
        "min_params": 0,
        "min_float_ops": min_float_ops,
        "order_by": order_by,
        "account_type_regexes": account_type_regexes,
        "start_name_regexes": [".*"],
        "trim_name_regexes": [],
        "show_name_regexes": [".*"],
        "hide_name_regexes": [],
        "account_displayed_op_only": True,
        "select": select,
        "output": "stdout",
        "dump_to_file": "",
    }


# the parameter counts of the trainable variables
TRAINABLE_VARS_PARAMS_STAT_OPTIONS = _options(["params"], "name", [tfprof_logger.TRAINABLE_VARIABLES])
# the floating-point operation counts (ops with at least one)
FLOAT_OPS_OPTIONS = _options(["float_ops"], "float_ops", [".*"], min_float_ops=1)
# time and memory of every op that took some of both
PRINT_ALL_TIMING_MEMORY = _options(["micros", "bytes"], "name", [".*"], min_bytes=1, min_micros=1)


def print_model_analysis(graph, run_meta=None, op_log=None, tfprof_cmd="scope", tfprof_options=0):
    """Prints (or writes, as ``tfprof_options["output"]`` says) and returns a profile of ``graph``.

    Args:
      graph: the ``tf.Graph``.
      run_meta: ``RunMetadata`` of a traced run, for times and memory.
      op_log: an ``OpLogProto`` with extra op information.
      tfprof_cmd: "scope", "graph", "op" or "code".
      tfprof_options: an option dictionary (``TRAINABLE_VARS_PARAMS_STAT_OPTIONS``, ...); 0 means
        ``TRAINABLE_VARS_PARAMS_STAT_OPTIONS``' selection (TensorFlow's default).
    Returns:
      A ``GraphNodeProto`` ("scope", "graph") or ``MultiGraphNodeProto`` ("op", "code").
    """
    return model_analyzer.profile(graph, run_meta, op_log, tfprof_cmd, tfprof_options)


def advise(graph, run_meta=None, tfprof_options=0):
    """``tf.compat.v1.profiler.advise``: an ``AdviceProto`` for ``graph``."""
    return model_analyzer.advise(graph, run_meta, tfprof_options)


_WARMUP_STEPS = 10
_MAX_TRACED_STEPS = 100


class ProfileContext:
    """Traces ``Session.run`` steps into a profiler while the context is active; profiles and dumps at given steps.

    Args:
      profile_dir: where ``profile_<step>`` files are written.
      trace_steps: the steps (``Session.run`` calls, counted from 0) to trace, at most 100; None: after 10 warm-up
        steps, trace every first run of a new set of fetches and some others at random, up to 100 traces.
      dump_steps: the steps after which the profile is written; None: step 100.
      enabled: False makes the context do nothing.
      debug: also write each trace's ``RunMetadata`` as text (``run_meta_<step>``) and say what happens on stderr.
    Raises:
      ValueError: no ``profile_dir``, or more than 100 trace steps.
    """

    def __init__(self, profile_dir, trace_steps=None, dump_steps=None, enabled=True, debug=False):
        self._enabled = enabled
        if not enabled:
            return
        if not profile_dir:
            raise NpuArgumentError("Must have a directory for profile (profile_dir is empty).")
        if trace_steps is not None and len(trace_steps) > _MAX_TRACED_STEPS:
            raise NpuArgumentError(f"Only support tracing up to {_MAX_TRACED_STEPS} steps (got {len(trace_steps)}).")
        self._debug = debug
        self._profile_dir = profile_dir
        self._auto_tracing = trace_steps is None
        self._trace_steps = set(trace_steps or ())
        self._dump_steps = {_MAX_TRACED_STEPS} if dump_steps is None else set(dump_steps)
        self._slow_steps = self._trace_steps | self._dump_steps
        self._auto_profiles = []
        self._views = {}
        self._seen_fetches = set()
        self._rng = random.Random(111)
        self._step = 0
        self._traced = 0
        self._trace_next = False
        self._dump_next = False
        self._profiler = None
        self._lock = threading.Lock()
        self._original_run = None

    @property
    def profiler(self):
        """The ``tf.compat.v1.profiler.Profiler`` that holds the traces (None when disabled)."""
        if not self._enabled:
            return None
        if self._profiler is None:
            self._profiler = Profiler(tf.compat.v1.get_default_graph())
        return self._profiler

    def add_auto_profiling(self, cmd, options, profile_steps):
        """Traces and profiles at the given steps.

        Args:
          cmd: "scope", "graph", "op" or "code".
          options: profile options (``tf.compat.v1.profiler.ProfileOptionBuilder(...).build()``).
          profile_steps: the steps to profile at.
        """
        if not self._enabled:
            return
        self._auto_profiles.append((cmd, options, list(profile_steps)))
        self._slow_steps |= set(profile_steps)
        self._trace_steps |= set(profile_steps)

    def get_profiles(self, cmd):
        """The profiles ``add_auto_profiling(cmd, ...)`` made: {step: ``GraphNodeProto`` or ``MultiGraphNodeProto``}.

        Raises:
          ValueError: no profile of ``cmd`` was made.
        """
        if cmd not in self._views:
            raise NpuArgumentError(f"No autoprofiler for command: {cmd}, was run")
        return self._views[cmd]

    def trace_next_step(self):
        """Traces the next ``Session.run``."""
        if self._enabled:
            self._trace_next = True
            self._slow_steps.add(self._step)

    def dump_next_step(self):
        """Writes the profile after the next ``Session.run``."""
        if self._enabled:
            self._dump_next = True
            self._slow_steps.add(self._step)

    def __enter__(self):
        if not self._enabled:
            return self
        if getattr(session_lib.BaseSession.run, "_npu_profile_context", None) is not None:
            raise tf.errors.InternalError(None, None, "Already in context or context not cleaned.")
        self._original_run = session_lib.BaseSession.run
        context, original = self, self._original_run

        def run(session, fetches, feed_dict=None, options=None, run_metadata=None):
            return context._run(session, original, fetches, feed_dict, options, run_metadata)

        run._npu_profile_context = self
        session_lib.BaseSession.run = run
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self._enabled and self._original_run is not None:
            session_lib.BaseSession.run = self._original_run
            self._original_run = None

    @contextlib.contextmanager
    def _new_step(self):
        acquired = self._lock.acquire(blocking=False)
        try:
            yield self._step, acquired
        finally:
            self._step += 1
            self._trace_next = False
            self._dump_next = False
            if acquired:
                self._lock.release()

    def _run(self, session, original, fetches, feed_dict, options, run_metadata):
        with self._new_step() as (step, acquired):
            if not acquired or self._fast(step):
                return original(session, fetches, feed_dict, options, run_metadata)
            if self._should_trace(step, session.graph, fetches):
                self._say(f"tracing step: {step}")
                run_metadata = run_metadata if run_metadata is not None else tf.compat.v1.RunMetadata()
                options = options if options is not None else tf.compat.v1.RunOptions()
                level = options.trace_level
                options.trace_level = tf.compat.v1.RunOptions.FULL_TRACE
                try:
                    result = original(session, fetches, feed_dict, options, run_metadata)
                finally:
                    options.trace_level = level
                if self._debug:
                    self._write_text(run_metadata, f"run_meta_{step}")
                self.profiler._graph = session.graph
                self.profiler.add_step(step, run_metadata)
            else:
                result = original(session, fetches, feed_dict, options, run_metadata)
            if step in self._dump_steps or self._dump_next:
                self._say(f"dumping file at step: {step}")
                tf.io.gfile.makedirs(self._profile_dir)
                self.profiler._write_profile(os.path.join(self._profile_dir, f"profile_{step}"))
            for cmd, opts, steps in self._auto_profiles:
                if step in steps:
                    self._say(f"profiling {cmd} step: {step}")
                    self._views.setdefault(cmd, {})[step] = self._profile(cmd, opts)
            return result

    def _fast(self, step):
        if step in self._slow_steps:
            return False
        return not (self._auto_tracing and step > _WARMUP_STEPS and self._traced <= _MAX_TRACED_STEPS)

    def _should_trace(self, step, graph, fetches):
        if self._traced > _MAX_TRACED_STEPS:
            return False
        if step in self._trace_steps or self._trace_next:
            self._traced += 1
            return True
        if not (self._auto_tracing and step > _WARMUP_STEPS):
            return False
        with graph.as_default():
            names = sorted(f.name for f in session_lib._FetchMapper.for_fetch(fetches).unique_fetches())
        key = "-".join(names)
        self._say(f"trace fetches: {key}")
        if key not in self._seen_fetches:
            self._seen_fetches.add(key)
            self._traced += 1
            return True
        # few traces of what runs: trace some more steps at random
        if self.profiler._coverage < 0.5 and step < _MAX_TRACED_STEPS and self._rng.randint(0, 10) < 2:
            self._traced += 1
            return True
        return False

    def _profile(self, cmd, opts):
        views = {
            "graph": self.profiler.profile_graph,
            "scope": self.profiler.profile_name_scope,
            "op": self.profiler.profile_operations,
            "code": self.profiler.profile_python,
        }
        if cmd not in views:
            raise NpuArgumentError(f"Unknown cmd: {cmd} (allowed: graph, scope, op, code)")
        return views[cmd](opts)

    def _write_text(self, proto, basename):
        tf.io.gfile.makedirs(self._profile_dir)
        with tf.io.gfile.GFile(os.path.join(self._profile_dir, basename), "w") as f:
            f.write(str(proto))

    def _say(self, message):
        if self._debug:
            sys.stderr.write(f"debug: {message}\n")
