"""Repeated runs of the same fetches and feed keys skip TensorFlow's per-run Python work, in bridged sessions.

On a small model ``session.run`` spends as long in Python as the step takes to compute (mapping the fetch
structure to graph elements, resolving and checking the feed keys, building the results: 150-300 us per run
here), and a training loop -- a bare loop with or without ``feed_dict``, ``MonitoredSession`` with its hooks, an
Estimator -- runs the same fetches and feed keys every step. In a bridged session, a run whose fetch structure
and feed keys were already run once goes through a runner made for them once: the fetches, targets and fed
tensors resolved with TensorFlow's own ``_FetchHandler`` and graph lookups, then each run is the same TensorFlow
run ``session.run`` makes (``_call_tf_sessionrun`` under the session's error conversion ``_do_call``), with the
same options, run metadata and results. Feed values are converted and checked as ``session.run`` does (its
NumPy conversion, its integer range and shape checks); a value it would refuse or treat specially (a tensor, a
``TensorHandle``, a wrong shape, an integer out of range) sends the run to ``session.run``, which raises its
own error.

Everything else takes ``session.run`` as usual: structures not seen before, fetches other than tensors,
operations and their names in lists, tuples and dicts (``SparseTensor``, variables, objects with registered
conversions), feed keys other than tensors and their names (``SparseTensor``, tuples), fetching a tensor that
is also fed (``session.run`` returns the fed value), and a closed session (which raises TensorFlow's error). A
structure is recognized by its containers, its dict keys and the identity of its leaves and feed keys; the
objects a runner was made for are kept with it, so no identity is reused while the runner exists.
"""

import threading

from tensorflow.python.client import pywrap_tf_session
from tensorflow.python.client import session as tf_session
from tensorflow.python.framework import ops
from tensorflow.python.framework import tensor as tensor_lib
from tensorflow.python.ops import session_ops
from tensorflow.python.util import compat, numpy_compat

MAX_STRUCTURES = 64  # runners kept per session; further structures take session.run
_MAX_SEEN = 1024  # structures run once, remembered to make a runner at their second run

_LEAF_TYPES = (tensor_lib.Tensor, ops.Operation, str)
_SPECIAL_FEED_VALUES = (tensor_lib.Tensor, session_ops.TensorHandle)


def install(session):
    """Makes ``session.run`` take the runner of a fetch structure and feed keys from their second run on.

    Args:
      session: a bridged session, before any run hooks wrap its ``run``.
    """
    original_run = session.run
    runners = {}  # structure key -> _Runner, or None for a structure session.run always takes
    seen = set()
    lock = threading.Lock()

    def run(fetches, feed_dict=None, options=None, run_metadata=None):
        runner = None
        if not getattr(session, "_closed", True):
            key = run_key(fetches, feed_dict)
            if key in runners:
                runner = runners[key]
            elif key is not None:
                runner = _runner_at_second_run(session, fetches, feed_dict, key, runners, seen, lock)
        feeds = runner.feeds(feed_dict) if runner is not None else None
        if feeds is None:
            return original_run(fetches, feed_dict, options, run_metadata)
        return runner.run(session, feeds, options, run_metadata)

    run.__doc__ = original_run.__doc__
    session.run = run


def _runner_at_second_run(session, fetches, feed_dict, key, runners, seen, lock):
    """Returns the runner of a structure run before (made now), or None: the structure is new (and now
    remembered), no more runners are kept, or session.run must take it (see _make_runner)."""
    with lock:
        if key not in seen:
            if len(seen) >= _MAX_SEEN:
                seen.clear()
            seen.add(key)
            return None
        if len(runners) >= MAX_STRUCTURES:
            return None
        try:
            runner = _make_runner(session, fetches, tuple(feed_dict or ()))
        except Exception:  # e.g. a bad fetch or feed key: session.run raises it
            seen.discard(key)
            return None
        runners[key] = runner
        return runner


def _make_runner(session, fetches, feed_keys):
    """Resolves a fetch structure and feed keys as ``session.run`` does.

    Returns:
      A _Runner, or None when ``session.run`` must take the structure: a tensor that may not be fed or is fed
      twice, a fetch that is also fed (it returns the fed value), nothing to run.
    Raises:
      What TensorFlow raises for a fetch or feed key it cannot take.
    """
    graph = session.graph
    session._extend_graph()  # as session.run does before a run
    fed = [graph.as_graph_element(key, allow_tensor=True, allow_operation=False) for key in feed_keys]
    fed_refs = {t.ref() for t in fed}
    handler = tf_session._FetchHandler(graph, fetches, {})
    if any(not graph.is_feedable(t) for t in fed) or len(fed_refs) < len(fed):
        return None  # session.run raises its error, or takes the last value of a tensor fed twice
    if any(t.ref() in fed_refs for t in handler.fetches()) or not (handler.fetches() or handler.targets()):
        return None
    return _Runner(handler, fed, kept=(fetches, feed_keys))


class _Runner:
    """A fetch structure and feed keys resolved once, run as ``session.run`` runs them."""

    def __init__(self, handler, fed, kept):
        self._kept = kept  # no identity in the structure key is reused while the runner exists
        self._handler = handler
        self._fed = [(t._as_tf_output(), t.dtype.as_numpy_dtype, t.get_shape()) for t in fed]
        self._fetch_list = [t._as_tf_output() for t in handler.fetches()]
        self._target_list = [op._c_op for op in handler.targets()]

    def feeds(self, feed_dict):
        """{fed output: array} converted as ``session.run`` converts the values, or None when ``session.run``
        must take the run (it refuses a value or treats it specially)."""
        feeds = {}
        try:
            for (output, dtype, shape), value in zip(self._fed, (feed_dict or {}).values()):
                if isinstance(value, _SPECIAL_FEED_VALUES):
                    return None
                if isinstance(value, int) and tf_session._convert_to_numpy_obj(dtype, value) != value:
                    return None
                array = numpy_compat.np_asarray(value, dtype)
                if not shape.is_compatible_with(array.shape):
                    return None
                feeds[output] = array
        except Exception:  # session.run converts again and raises the error
            return None
        return feeds

    def run(self, session, feeds, options, run_metadata):
        """Runs the structure with ``feeds`` (from ``feeds()``); returns what ``session.run`` returns."""
        options_buffer = (
            pywrap_tf_session.TF_NewBufferFromString(compat.as_bytes(options.SerializeToString())) if options else None
        )
        metadata_buffer = pywrap_tf_session.TF_NewBuffer() if run_metadata else None
        try:
            results = session._do_call(
                session._call_tf_sessionrun,
                options_buffer,
                feeds,
                self._fetch_list,
                self._target_list,
                metadata_buffer,
            )
            if run_metadata:
                run_metadata.ParseFromString(compat.as_bytes(pywrap_tf_session.TF_GetBuffer(metadata_buffer)))
        finally:
            if metadata_buffer:
                pywrap_tf_session.TF_DeleteBuffer(metadata_buffer)
            if options_buffer:
                pywrap_tf_session.TF_DeleteBuffer(options_buffer)
        return self._handler.build_results(session, results)


def run_key(fetches, feed_dict):
    """A hashable key naming a fetch structure and its feed keys, or None when such runs take ``session.run``.

    Args:
      fetches: the ``fetches`` argument of a session run.
      feed_dict: its ``feed_dict`` argument.
    Returns:
      (structure key of the fetches, feed keys: tensor identities and names in order), or None.
    """
    fetch_key = structure_key(fetches)
    if fetch_key is None:
        return None
    if not feed_dict:
        return fetch_key, ()
    if type(feed_dict) is not dict:
        return None
    feed_key = []
    for key in feed_dict:
        if isinstance(key, str):
            feed_key.append(key)
        elif isinstance(key, tensor_lib.Tensor):
            feed_key.append(id(key))
        else:
            return None
    return fetch_key, tuple(feed_key)


def structure_key(fetches):
    """A hashable key naming a fetch structure, or None when runs of it take ``session.run``.

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
