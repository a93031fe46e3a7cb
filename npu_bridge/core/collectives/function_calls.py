"""Collective failures in TF2 function calls become ``CollectiveError``s, and their stalls are reported, as in TF1
session runs.

A TF1 session's run hook (``npu_bridge.core.session.steps.collectives``) explains a failed collective and registers
each run that executes collectives with the watchdog (which drives the stall report); TF2 code runs its
collectives in eager ``tf.function`` calls, which have no run hooks. So in a world of several ranks whose eager
context joined the job, ``explain_failures`` wraps ``Function.__call__`` (the class behind ``tf.function``, the
script's steps and Keras' ``train_function`` alike):

  * a TensorFlow error a collective raised in a call is re-raised as the ``CollectiveError`` TF1 would give
    (``failures``), naming the rank to blame, with TensorFlow's error as its cause; other errors pass unchanged;
  * a function whose tracing built collectives (its first call, usually) is watched from its next call on: each
    eager call is registered with the watchdog with those collectives, and its step is the number of calls
    before it, so a call that waits longer than NPU_BRIDGE_STALL_SECONDS is reported like a session run. A call
    may loop over many steps (a training loop inside the function), so the watchdog never ends a rank because a
    call lasts long; each collective in it stays bounded by the collective timeout.

Calls traced into another function's graph pass unchanged: the outer call covers them.
"""

import functools
import re
import threading
import weakref

from npu_bridge.core.collectives import registry

_NODE = re.compile(r"\{\{node ([^}]+)\}\}")
_lock = threading.Lock()
_state = {"runtime": None, "timeout": None}
_watched = weakref.WeakKeyDictionary()  # Function -> _Watched, for functions whose tracing built collectives


class _Watched:
    """A function with collectives: what its calls run (``registry.RunCollectives``) and how many calls it had."""

    def __init__(self, run, calls):
        self.run, self.calls = run, calls


def explain_failures(runtime, timeout):
    """Explains the collective failures of every function call from now on (once per process).

    Args:
      runtime: the rank's ``server.Runtime``.
      timeout: the collective timeout in seconds (what a call's collectives keep as their bound).
    """
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    with _lock:
        installed = _state["runtime"] is not None
        _state["runtime"], _state["timeout"] = runtime, timeout
        if not installed:
            polymorphic_function.Function.__call__ = _wrap(polymorphic_function.Function.__call__)


def _wrap(original):
    import tensorflow as tf

    from npu_bridge.core.collectives import failures

    @functools.wraps(original)
    def explained_call(function, *args, **kwargs):
        eager = tf.executing_eagerly()
        watched = _watched.get(function) if eager else None
        runtime, timeout = _state["runtime"], _state["timeout"]
        before, token = registry.recorded_count(), None
        if watched is not None:
            run = watched.run
            token = runtime.watchdog.enter(run.describe, run.ranks, timeout, run, watched.calls, bounded=False)
            watched.calls += 1
        try:
            return original(function, *args, **kwargs)
        except Exception as error:
            if not failures.is_collective_failure(error):
                raise
            node = _NODE.search(error.message or "")
            collective = f"{node.group(1) if node else 'a collective'} in tf.function {function.__name__!r}"
            raise failures.replacement(error, collective, runtime, timeout) from error
        finally:
            if token is not None:
                runtime.watchdog.leave(token)
            elif eager:
                _watch_if_built(function, registry.recorded_since(before))

    return explained_call


def _watch_if_built(function, built):
    """Watches ``function``'s calls from now on when its call just built the collectives ``built``."""
    if not built:
        return
    ops = tuple(sorted(dict(built).items(), key=lambda item: item[0]))  # one per name: a retrace builds them again
    run = registry.RunCollectives(ops=ops, ranks=frozenset(r for _, info in ops for r in info.ranks), graph_key=0)
    try:
        _watched[function] = _Watched(run, calls=1)
    except TypeError:  # a callable that takes no weak reference: its calls stay unwatched
        pass
