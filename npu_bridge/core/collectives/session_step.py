"""How bridged sessions take part in a multi-rank job (session setup step 300, "collectives").

For every bridged session:
  * the session's collective timeout (``hccl_timeout`` > HCCL_EXEC_TIMEOUT > 1836 s) is decided once, here, and
    goes into the session's pass plan. In a world of several ranks a run that executes collectives is bounded by it (its
    ``RunOptions.timeout_in_ms``, times ``iterations_per_loop``, unless the script set a shorter one); the
    NpuOptimizer pass clears the ops' own timeout, whose per-execution timer TensorFlow would keep in memory
    until it expires, except for collectives inside a while loop of the graph, which keep it as their bound.
    The watchdog and error messages of the session's runs use the same value;
  * in a world of more than one rank, the rank's collective server is started (once; it waits for every
    rank) and the session targets it, restricted to this rank's own worker. A session the user pointed at
    a target of their own keeps it. When the eager context is the server (TF2 code), the plan is for
    function graphs: their collectives keep the session's timeout as their own, and there is no run hook.
  * a run hook watches the runs that execute collectives: it gives V2 collectives their graph key, tells the
    watchdog what the run waits for, turns a collective failure into a ``CollectiveError`` that says what
    happened and which rank is to blame, and makes every later collective run fail at once with that cause
    (TensorFlow cannot run collectives again in a process after a failure).
"""

import re

import tensorflow as tf

from npu_bridge.core.collectives import registry, server, settings
from npu_bridge.core.runtime import interrupt, log
from npu_bridge.core.runtime.errors import CollectiveError
from npu_bridge.core.session.setup_steps import RunHook, setup_step

_REMOTE_TASK = re.compile(r"remote target /job:[\w-]+/replica:\d+/task:(\d+)")
_NOISE = (
    "Graph execution error",
    "Detected at node",
    "Node:",
    "From /job:",
    "Original stack trace",
    "The error could be from",
    "Additional GRPC error",
    "[[{{node",
    'File "',
)


@setup_step(300, "collectives")
def attach_collectives(plan):
    """Decides the collective timeout and, with more than one rank, redirects the session to the rank's server."""
    timeout = settings.exec_timeout(plan.options.get("hccl_timeout"))
    plan.pass_plan.collective_timeout = timeout
    current = plan.world
    if current.rank_size == 1:
        return  # no run hook: the collectives keep their own timeout
    runtime = server.ensure_started(current)
    if plan.pass_plan.function_graphs:
        return  # TF2 function graphs run without RunOptions: each collective keeps the timeout the pass stamps
    plan.pass_plan.collective_run_bound = True
    if not plan.target:
        plan.target = runtime.target
    elif plan.target != runtime.target:
        log.info_once(
            ("own-target", plan.target),
            "session target %s kept as given; collectives of rank %d need sessions on its server %s",
            plan.target,
            runtime.rank,
            runtime.target,
        )
    if not plan.config.device_filters:
        plan.config.device_filters.append(runtime.device_filter)
    hook = CollectiveRunHook(runtime, plan.pass_plan.collective_timeout, plan.pass_plan.iterations_per_loop)
    plan.run_hooks.append(hook)


class CollectiveRunHook(RunHook):
    """Watches the runs of one session that execute collectives (see the module docstring)."""

    def __init__(self, runtime, timeout, iterations_per_loop=1):
        self._runtime = runtime
        self._timeout = timeout
        self._deadline_ms = timeout * 1000 * max(1, iterations_per_loop)
        self._in_flight = {}  # id(context) -> (RunCollectives, watchdog token)
        self._options = {}  # (graph key, deadline) -> RunOptions for runs the script gave none

    def before_run(self, context):
        run = registry.for_run(context.session.graph, context.fetches)
        if run is None:
            return
        if self._runtime.failure is not None:
            raise CollectiveError(
                f"{self._runtime.failure}\nCollectives cannot run again in this process after that failure "
                "(TensorFlow stops them for good): end this rank and restart the job"
            )
        context.options = self._run_options(context.options, run)
        token = self._runtime.watchdog.enter(run.describe, run.ranks, self._timeout)
        self._in_flight[id(context)] = (run, token)

    def _run_options(self, given, run):
        """``given`` RunOptions with the run's collective graph key and deadline added where missing."""
        key = 0 if given is not None and given.experimental.collective_graph_key else run.graph_key
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
        if not (deadline_hit or _is_collective_failure(error)):
            return None
        # --- npu-run is stopping the job (Ctrl-C): the peers left because of that, not by failing ---
        reason = interrupt.stop_reason()
        if reason is not None:
            return KeyboardInterrupt(f"npu-run is stopping the job ({reason}); {run.describe()} could not finish")
        # ---
        message = explain(error, run, self._runtime, self._timeout)
        self._runtime.record_failure(message)
        return CollectiveError(message)

    def _finish(self, context):
        run, token = self._in_flight.pop(id(context), (None, None))
        if token is not None:
            self._runtime.watchdog.leave(token)
        return run


def _is_collective_failure(error):
    if not isinstance(error, tf.errors.OpError):
        return False
    if error.op is not None and registry.info(error.op) is not None:
        return True
    return "ollective" in (error.message or "")


def cause(error):
    """Returns the informative line of a TensorFlow error message (without TF's wrapping)."""
    for line in (error.message or str(error)).splitlines():
        line = line.strip()
        if not line or any(line.startswith(noise) for noise in _NOISE):
            continue
        while line.startswith("Collective ops is aborted by:"):
            line = line[len("Collective ops is aborted by:") :].strip()
        if line:
            return line
    return type(error).__name__


def explain(error, run, runtime, timeout):
    """Builds the message of the ``CollectiveError`` that replaces a TensorFlow collective error.

    Args:
      error: the ``tf.errors.OpError`` the run raised.
      run: the ``registry.RunCollectives`` of the run.
      runtime: the ``server.Runtime``.
      timeout: the session's collective timeout in seconds.
    """
    what = f"rank {runtime.rank}: {run.describe(focus=error.op.name if error.op is not None else None)}"
    detail = cause(error)
    if isinstance(error, tf.errors.DeadlineExceededError):
        return (
            f"{what} did not finish within the collective timeout of {timeout} s (hccl_timeout / "
            f"HCCL_EXEC_TIMEOUT): a peer rank is hung or much slower, or did not run the matching collective "
            f"(every rank must run the same collectives in the same order). TensorFlow: {detail}"
        )
    text = error.message or ""
    called = {int(task) for task in _REMOTE_TASK.findall(text)}
    peers = [
        r
        for r, address in enumerate(runtime.addresses)
        if r != runtime.rank and (r in called or re.search(re.escape(address) + r"(?!\d)", text))
    ]
    if peers:
        names = ", ".join(runtime.describe_rank(p) for p in peers)
        return f"{what} failed: {names} cannot be reached; it has probably exited or crashed. TensorFlow: {detail}"
    if "Shape mismatch" in detail:
        return (
            f"{what} failed: the ranks passed different shapes; every rank must pass the same shape, "
            f"and the same on every run. TensorFlow: {detail}"
        )
    return f"{what} failed. TensorFlow: {detail}"
