"""The graph signature of a traced run: what it fetched and fed, under which the recorder numbers its models."""

import collections.abc


def run_signature(fetches, feed_dict):
    """What identifies the graph TensorFlow executes for a run: the names of what it fetches and feeds.

    TensorFlow builds (and the NpuOptimizer instruments) one graph per such signature in a session, so runs with
    the same signature are iterations of one model -- also when a cond takes another branch.

    Args:
      fetches: the run's fetches (any structure of tensors, operations, variables or names).
      feed_dict: its feed dict, or None.
    Returns:
      A text such as "fetch:loss:0,train|feed:x:0".
    """
    fetched = sorted({_fetch_name(item) for item in _leaves(fetches)})
    fed = sorted({_fetch_name(item) for item in _leaves(list(feed_dict or ()))})
    return "fetch:" + ",".join(fetched) + "|feed:" + ",".join(fed)


def _leaves(structure):
    """The leaves of nested dicts (their values: MonitoredSession keys hooks' fetches by hook), lists and tuples."""
    if isinstance(structure, collections.abc.Mapping):
        for value in structure.values():
            yield from _leaves(value)
    elif isinstance(structure, (list, tuple)):
        for item in structure:
            yield from _leaves(item)
    else:
        yield structure


def _fetch_name(item):
    name = getattr(item, "name", None)
    return name if isinstance(name, str) else str(item)
