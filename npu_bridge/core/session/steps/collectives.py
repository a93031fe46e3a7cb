"""The collectives step: how bridged sessions take part in a multi-rank job.

For every bridged session:
  * the session's collective timeout (``hccl_timeout`` > HCCL_EXEC_TIMEOUT > 1836 s) is decided once, here, and
    goes into the session's pass plan. In a world of several ranks a run that executes collectives is bounded by it (its
    ``RunOptions.timeout_in_ms``, times ``iterations_per_loop``, unless the script set a shorter one); the
    NpuOptimizer pass clears the ops' own timeout, whose per-execution timer TensorFlow would keep in memory
    until it expires, except for collectives inside a while loop of the graph, which keep it as their bound.
    The watchdog and error messages of the session's runs use the same value;
  * in a world of more than one rank, the rank's collective server is started (once; it waits for every
    rank) and the session targets it, restricted to this rank's own worker. A session the user pointed at
    a target of their own keeps it. When every collective of the job runs on the shared-memory segment
    (``shm_primitives.carries_every_group``: all ranks on this host, with npu-run's segment or the host keeper's),
    the session stays a local one instead: no TensorFlow collective needs the server, and a run through the rank's gRPC
    master cost 1.4 ms more for a 4 KiB allreduce (0.40 against 1.80 ms, 2 ranks). A TensorFlow collective in such a
    session's run (built after ``NPU_BRIDGE_COLLECTIVES=tf`` was set) fails at once, saying so. A plan for TF2 function
    graphs (``npu_device.open()``) makes the eager context the rank's server instead (unless a session started one
    before): their collectives keep the session's timeout as their own, and there is no run hook.
  * when more than one rank of the job runs on this host, TensorFlow's thread pools do not spin
    (``thread_spinning``): the session's config, like the rank's server, turns spinning off;
  * a session that runs collectives through TensorFlow takes the step sequence of point-to-point runs together with
    every other rank, with the process's first such session (``step_sequences.align_point_to_point``);
  * a run hook watches the runs that execute collectives: it gives V2 collectives their graph key, tells the
    watchdog what the run waits for, turns a collective failure into a ``CollectiveError`` that says what
    happened and which rank is to blame, and makes every later collective run fail at once with that cause
    (TensorFlow cannot run collectives again in a process after a failure).
"""

import tensorflow as tf

from npu_bridge.core.collectives import (
    failures,
    function_calls,
    registry,
    server,
    settings,
    shm_primitives,
    shm_segment,
    step_sequences,
    thread_spinning,
)
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import CollectiveError
from npu_bridge.core.session.step_api import RunHook


def setup(plan):
    """Decides the collective timeout and, with more than one rank, redirects the session to the rank's server."""
    timeout = settings.exec_timeout(plan.options.get("hccl_timeout"))
    plan.pass_plan.collective_timeout = timeout
    settings.stall_seconds()  # a bad NPU_BRIDGE_STALL_SECONDS fails at session creation, in any world
    shm_segment.path_choice()  # and so does a bad NPU_BRIDGE_COLLECTIVES
    current = plan.world
    thread_spinning.apply(plan.config, current)
    if current.rank_size == 1:
        return  # no run hook: the collectives keep their own timeout
    runtime = server.ensure_started(current, eager=plan.pass_plan.function_graphs)
    if plan.pass_plan.function_graphs:
        # TF2 function graphs run without RunOptions: each collective keeps the timeout the pass stamps, and the
        # function calls take the run hook's part in explaining a failure.
        function_calls.explain_failures(runtime, timeout)
        return
    plan.pass_plan.collective_run_bound = True
    local = not plan.target and shm_primitives.carries_every_group(current, host_tensors=plan.backend != "gpu")
    if not plan.target and not local:
        plan.target = runtime.target
    elif plan.target != runtime.target:
        log.info_once(
            ("own-target", plan.target),
            "session target %s kept as given; collectives of rank %d need sessions on its server %s",
            plan.target,
            runtime.rank,
            runtime.target,
        )
    if not plan.config.device_filters and not local:
        plan.config.device_filters.append(runtime.device_filter)
    if not local:
        step_sequences.align_point_to_point(runtime, settings.connect_timeout())
    hook = CollectiveRunHook(runtime, plan.pass_plan.collective_timeout, plan.pass_plan.iterations_per_loop, local)
    plan.run_hooks.append(hook)


class CollectiveRunHook(RunHook):
    """Watches the runs of one session that execute collectives (see the module docstring)."""

    def __init__(self, runtime, timeout, iterations_per_loop=1, local=False):
        """``local``: the session runs without the rank's server (every collective on the segment)."""
        self._runtime = runtime
        self._local = local
        self._timeout = timeout
        self._deadline_ms = timeout * 1000 * max(1, iterations_per_loop)
        self._in_flight = {}  # id(context) -> (RunCollectives, watchdog token)
        self._options = {}  # (graph key, deadline) -> RunOptions for runs the script gave none

    def before_run(self, context):
        run = registry.for_run(context.session.graph, context.fetches)
        if run is None:
            return
        if self._runtime.failure is not None:
            raise CollectiveError(f"{self._runtime.failure}\n{failures.CANNOT_RUN_AGAIN}")
        if self._local and run.tensorflow_ops:
            raise CollectiveError(
                f"rank {self._runtime.rank}: {', '.join(run.tensorflow_ops)}: TensorFlow collective ops in a session "
                "that runs without the rank's gRPC runtime (when the session was created every collective of this job "
                f"ran on the shared-memory segment); set {shm_segment.PATH_VARIABLE}=tf before creating the session to "
                "run them"
            )
        context.options = self._run_options(context.options, run)
        graph_key = context.options.experimental.collective_graph_key if context.options is not None else 0
        if graph_key and self._runtime.rank == 0:
            step_sequences.hold(self._runtime.target, graph_key)
        token = self._runtime.watchdog.enter(run.describe, run.ranks, self._timeout, run, context.step)
        self._in_flight[id(context)] = (run, token)

    def _run_options(self, given, run):
        """``given`` RunOptions with the run's collective graph key and deadline added where missing."""
        given_key = given is not None and given.experimental.collective_graph_key
        key = 0 if given_key or self._local else run.graph_key  # a local session runs no TensorFlow collective
        deadline = 0 if run.in_loop else self._deadline_ms
        if given is not None and 0 < given.timeout_in_ms <= deadline:
            deadline = 0  # the script's own bound is shorter
        if not (key or deadline):
            return given
        if given is None:
            if (key, deadline) not in self._options:
                self._options[(key, deadline)] = self._make_options(None, key, deadline)
            return self._options[(key, deadline)]
        return self._make_options(given, key, deadline)

    @staticmethod
    def _make_options(given, key, deadline):
        options = tf.compat.v1.RunOptions()
        if given is not None:
            options.CopyFrom(given)
        if key:
            options.experimental.collective_graph_key = key
        if deadline:
            options.timeout_in_ms = deadline
        return options

    def after_run(self, context, results):
        self._finish(context)

    def run_failed(self, context, error):
        run = self._finish(context)
        if run is None:
            return None
        # The run's deadline is the collective timeout: a run that exceeds it waited in a collective.
        deadline_hit = isinstance(error, tf.errors.DeadlineExceededError) and not run.in_loop
        if not (deadline_hit or failures.is_collective_failure(error)):
            return None
        focus = error.op.name if error.op is not None else None
        return failures.replacement(error, run.describe(focus=focus), self._runtime, self._timeout)

    def _finish(self, context):
        run, token = self._in_flight.pop(id(context), (None, None))
        if token is not None:
            self._runtime.watchdog.leave(token)
        return run
