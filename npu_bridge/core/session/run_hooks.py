"""Run hooks on a bridged session: ``attach_run_hooks`` wraps one session's ``run`` and ``close`` so the hooks its
setup steps asked for see every run; sessions without hooks are not wrapped, so they pay nothing for them."""

import weakref

from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.runtime import interrupt
from npu_bridge.core.session.step_api import RunContext

_live_sessions = weakref.WeakSet()  # every bridged session not yet garbage-collected


def attach_run_hooks(session, hooks):
    """Wraps ``session.run``, the callables Keras makes (``_make_callable_from_options``) and
    ``session.close`` of this one session so ``hooks`` see every run.

    Also usable later on a live session (a capability switched on after the session was created).

    Args:
      session: a bridged session.
      hooks: ``RunHook``s; nothing is wrapped when empty.
    """
    _live_sessions.add(session)
    if not hooks:
        return
    original_run, original_close = session.run, session.close
    original_make_callable = session._make_callable_from_options
    state = {"steps": 0, "ended": False}

    def observed(fetches, feed_dict, options, run_metadata, call):
        context = RunContext(session, fetches, feed_dict, options, run_metadata, state["steps"])
        state["steps"] += 1
        for hook in hooks:
            hook.before_run(context)
        try:
            results = call(context)
        except KeyboardInterrupt as ctrl_c:
            _interrupted(hooks, context, ctrl_c)
            raise
        except Exception as error:  # hooks may explain it; it is re-raised
            if interrupt.is_hidden_interrupt(error):
                # SIGINT arrived while TensorFlow raised the run's error: pybind11 gives a RuntimeError
                # ("MISMATCH ... REPLACED BY KeyboardInterrupt"); raise what it hides, so that Ctrl-C is one.
                ctrl_c = KeyboardInterrupt()
                _interrupted(hooks, context, ctrl_c)
                raise ctrl_c from None
            raised = error
            for hook in reversed(hooks):
                raised = hook.run_failed(context, raised) or raised
            if raised is error:
                raise
            raise raised from error
        for hook in reversed(hooks):
            hook.after_run(context, results)
        return results

    def run(fetches, feed_dict=None, options=None, run_metadata=None):
        return observed(
            fetches,
            feed_dict,
            options,
            run_metadata,
            lambda c: original_run(c.fetches, c.feed_dict, c.options, c.run_metadata),
        )

    def make_callable_from_options(callable_options):
        call = original_make_callable(callable_options)
        fetches = list(callable_options.fetch) + list(callable_options.target)
        with_options = {}  # serialized RunOptions a hook asked for -> a callable made with them

        def call_as_hooks_ask(context, args, kwargs):
            if context.options is None:
                return call(*args, **dict(kwargs, run_metadata=context.run_metadata))
            key = context.options.SerializeToString()
            if key not in with_options:  # a callable's run options are fixed when it is made
                options = config_pb2.CallableOptions()
                options.CopyFrom(callable_options)
                options.run_options.MergeFrom(context.options)
                with_options[key] = original_make_callable(options)
            return with_options[key](*args, **dict(kwargs, run_metadata=context.run_metadata))

        def invoke(*args, **kwargs):
            return observed(
                fetches, None, None, kwargs.pop("run_metadata", None), lambda c: call_as_hooks_ask(c, args, kwargs)
            )

        return invoke

    def close():
        try:
            original_close()
        finally:
            if not state["ended"]:
                state["ended"] = True
                for hook in hooks:
                    hook.end(session)

    run.__doc__, close.__doc__ = original_run.__doc__, original_close.__doc__
    session.run, session.close = run, close
    session._make_callable_from_options = make_callable_from_options


def _interrupted(hooks, context, interrupt):
    """Tells ``hooks`` that Ctrl-C ended the run (they release what they hold for it); an interrupt is not
    replaced, so what they return is ignored."""
    for hook in reversed(hooks):
        hook.run_failed(context, interrupt)


def open_sessions():
    """The bridged sessions that exist and are not closed, in no particular order."""
    return [session for session in list(_live_sessions) if not getattr(session, "_closed", False)]
