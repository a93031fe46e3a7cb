"""Repeated runs of the same fetches skip TensorFlow's per-run Python work, in bridged sessions.

On a small model ``session.run`` spends as long in Python as the step takes to compute (mapping the fetch
structure to graph elements, checking the graph, building the results: 150-300 us per run here), and a
training loop -- a bare loop, ``MonitoredSession`` with its hooks, an Estimator -- runs the same fetches every
step. In a bridged session a run without feeds whose fetch structure was already run once goes through
TensorFlow's own ``Session.make_callable(fetches, accept_options=True)``, made once per structure: the same
TensorFlow run with the same options and run metadata and the same results, without the mapping. Errors are
raised exactly as ``session.run`` raises them (the session's own error conversion, ``_do_call``).

Everything else takes ``session.run`` as usual: runs with feeds, fetch structures not seen before, fetches
other than tensors, operations and their names in lists, tuples and dicts (``SparseTensor``, variables,
objects with registered conversions), and a closed session (which raises TensorFlow's error). A fetch
structure is recognized by its containers, its dict keys and the identity of its leaves; the fetches a
callable was made for are kept with it, so no identity is reused while the callable exists.
"""

import threading

from tensorflow.python.framework import ops
from tensorflow.python.framework import tensor as tensor_lib

MAX_STRUCTURES = 64  # callables kept per session; further structures take session.run
_MAX_SEEN = 1024  # structures run once, remembered to make a callable at their second run

_LEAF_TYPES = (tensor_lib.Tensor, ops.Operation, str)


def install(session):
    """Makes ``session.run`` take the callable of a fetch structure from its second run on.

    Args:
      session: a bridged session, before any run hooks wrap its ``run``.
    """
    original_run = session.run
    callables = {}  # structure key -> (the fetches, kept alive so that no leaf identity is reused; callable)
    seen = set()
    lock = threading.Lock()

    def run(fetches, feed_dict=None, options=None, run_metadata=None):
        if feed_dict or getattr(session, "_closed", True):
            return original_run(fetches, feed_dict, options, run_metadata)
        key = structure_key(fetches)
        if key is None:
            return original_run(fetches, feed_dict, options, run_metadata)
        entry = callables.get(key)
        made = entry[1] if entry is not None else _callable_at_second_run(session, fetches, key, callables, seen, lock)
        if made is None:
            return original_run(fetches, feed_dict, options, run_metadata)
        return session._do_call(made, options, run_metadata)  # pylint: disable=protected-access

    run.__doc__ = original_run.__doc__
    session.run = run


def _callable_at_second_run(session, fetches, key, callables, seen, lock):
    """Returns the callable of a structure run before (made now), or None: the structure is new (and now
    remembered), or no more callables are kept."""
    with lock:
        if key not in seen:
            if len(seen) >= _MAX_SEEN:
                seen.clear()
            seen.add(key)
            return None
        if len(callables) >= MAX_STRUCTURES:
            return None
        try:
            made = session.make_callable(fetches, accept_options=True)
        except Exception:  # pylint: disable=broad-except  # e.g. a bad fetch: session.run raises its error
            seen.discard(key)
            return None
        callables[key] = (fetches, made)
        return made


def structure_key(fetches):
    """A hashable key naming a fetch structure, or None when runs of it are not made callables.

    Args:
      fetches: the ``fetches`` argument of a session run.
    Returns:
      A tuple of container types, dict keys and leaf identities (strings by value), or None.
    """
    if isinstance(fetches, _LEAF_TYPES):
        return fetches if isinstance(fetches, str) else id(fetches)
    kind = type(fetches)
    if isinstance(fetches, dict):
        if kind is not dict:
            return None
        parts = [kind]
        for name, value in fetches.items():
            part = structure_key(value)
            if part is None:
                return None
            parts.append((name, part))
        return tuple(parts)
    if kind in (list, tuple) or (isinstance(fetches, tuple) and hasattr(fetches, "_fields")):  # namedtuples too
        parts = [kind]
        for value in fetches:
            part = structure_key(value)
            if part is None:
                return None
            parts.append(part)
        return tuple(parts)
    return None
