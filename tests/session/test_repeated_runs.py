"""Repeated runs of the same fetches and feed keys in a bridged session: TensorFlow's per-run Python work is
skipped from the second run on, and what a script sees -- values, structures, errors, run metadata, feeds --
stays exactly what ``session.run`` gives in a plain session."""

import collections

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from tensorflow.core.protobuf import config_pb2
from tensorflow.python.client import session as tf_session

from npu_bridge.core.session import repeated_runs

v1 = tf.compat.v1
Pair = collections.namedtuple("Pair", "step total")


def _counter_graph(check=False):
    graph = tf.Graph()
    with graph.as_default():
        step = v1.get_variable("step", [], tf.int64, initializer=v1.zeros_initializer(), use_resource=True)
        total = v1.get_variable("total", [], tf.float32, initializer=v1.zeros_initializer(), use_resource=True)
        x = v1.placeholder_with_default(tf.constant(1.5), [], name="x")
        update = tf.group(step.assign_add(1), total.assign_add(x), name="update")
        with tf.control_dependencies([update]):
            read_step = tf.identity(step.read_value(), name="step_value")
            read_total = tf.identity(total.read_value(), name="total_value")
        init = v1.global_variables_initializer()
        parts = {"update": update, "step": read_step, "total": read_total, "init": init}
        if check:
            parts["check"] = tf.debugging.assert_less(read_step, np.int64(4), message="too many steps")
    return graph, parts


def _structures(t):
    return [
        t["update"],
        t["step"],
        [t["update"], t["total"]],
        (t["step"], t["total"]),
        Pair(t["step"], t["total"]),
        {"train": [t["update"], t["step"]], "nested": {"pair": Pair(t["step"], t["total"]), "name": "total_value:0"}},
        "step_value:0",
    ]


def _run_all(config, runs=3):
    graph, t = _counter_graph()
    with v1.Session(graph=graph, config=config) as sess:
        results = []
        for fetches in _structures(t):
            sess.run(t["init"])
            results.append([sess.run(fetches) for _ in range(runs)])
    return results


def _same(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            _same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif a is not None:
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b), (a, b)


@pytest.fixture
def fetch_handlers(monkeypatch):
    """Counts TensorFlow's per-run fetch mapping (``_FetchHandler``), which the repeated runs skip."""
    made = []
    original = tf_session._FetchHandler

    class Counting(original):
        def __init__(self, *args, **kwargs):
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(tf_session, "_FetchHandler", Counting)
    return made


def test_every_fetch_structure_gives_what_a_plain_session_gives_run_after_run():
    plain, bridged = _run_all(None), _run_all(npu_config())
    _same(bridged, plain)
    assert [runs[-1] for runs in bridged][:4] == [None, 3, [None, 4.5], (3, 4.5)]
    assert bridged[4][2] == Pair(3, 4.5) and bridged[5][2]["nested"]["name"] == 4.5


def test_the_fetch_mapping_is_done_twice_per_structure_then_skipped(fetch_handlers):
    graph, t = _counter_graph()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        sess.run(t["init"])
        fetch_handlers.clear()
        fetches = {"train": [t["update"], t["total"]], "step": t["step"]}
        for _ in range(3):
            sess.run(dict(fetches))  # a new dict every run, as MonitoredSession builds it
        assert len(fetch_handlers) == 2  # the first run, and the callable made at the second
        results = [sess.run(dict(fetches)) for _ in range(20)]
        assert len(fetch_handlers) == 2
        assert [r["step"] for r in results] == list(range(4, 24))
        assert results[-1]["train"][1] == pytest.approx(23 * 1.5)
    with v1.Session(graph=graph) as plain:  # a session that is not bridged is TensorFlow's own
        plain.run(t["init"])
        fetch_handlers.clear()
        for _ in range(5):
            plain.run(t["step"])
        assert len(fetch_handlers) == 5


def test_runs_with_feeds_see_their_feeds(fetch_handlers):
    graph, t = _counter_graph()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        sess.run(t["init"])
        fetch_handlers.clear()
        totals = [sess.run(t["total"], {"x:0": value}) for value in (1.0, 2.0, 3.0, 4.0)]
        assert totals == [1.0, 3.0, 6.0, 10.0]
        assert len(fetch_handlers) == 2
        assert sess.run(t["total"]) == 11.5  # the default again, now without feeds
        assert sess.run(t["total"], feed_dict={}) == 13.0


def _feed_graph():
    graph = tf.Graph()
    with graph.as_default():
        parts = {
            "x": v1.placeholder(tf.float32, [None, 3], name="x"),
            "n": v1.placeholder(tf.int32, [], name="n"),
            "flag": v1.placeholder(tf.bool, [], name="flag"),
            "word": v1.placeholder(tf.string, [], name="word"),
        }
        scaled = parts["x"] * tf.cast(parts["n"], tf.float32)
        parts["fetches"] = {
            "sum": tf.reduce_sum(scaled, axis=1),
            "picked": tf.where(parts["flag"], scaled, -scaled),
            "length": tf.strings.length(parts["word"]),
            "shape": tf.shape(parts["x"]),
        }
        parts["fixed"] = tf.constant([1.0, 2.0], name="fixed")
        parts["half"] = tf.identity(parts["fixed"] / 2.0, name="half")
    graph.prevent_feeding(parts["fixed"])
    return graph, parts


# Feed values as scripts give them: arrays of another dtype, nested lists, Python scalars, NumPy scalars, bytes.
_FEEDS = [
    ([[1.0, 2.0, 3.0]], 2, True, "ab"),
    (np.arange(6, dtype=np.float64).reshape(2, 3), np.int64(3), False, b"abcd"),
    (np.ones((4, 3), np.float32), 1, np.bool_(True), ""),
    ([[0.5, -1, 2]], -4, 0, "xyz"),
]


def _feed_runs(config):
    graph, t = _feed_graph()
    with v1.Session(graph=graph, config=config) as sess:
        results = []
        for x, n, flag, word in _FEEDS * 3:
            results.append(sess.run(t["fetches"], {t["x"]: x, t["n"]: n, t["flag"]: flag, "word:0": word}))
        results.append(sess.run(t["half"], {t["x"]: [[1.0, 1.0, 1.0]]}))  # a feed the fetches do not use
    return results


def test_runs_with_feeds_give_what_a_plain_session_gives_and_are_mapped_twice(fetch_handlers):
    plain = _feed_runs(None)
    fetch_handlers.clear()
    bridged = _feed_runs(npu_config())
    assert len(fetch_handlers) == 3  # the feed structure twice, the last run once
    _same(bridged, plain)
    assert bridged[1]["sum"].tolist() == [9.0, 36.0] and bridged[1]["length"] == 4
    assert bridged[-1].tolist() == [0.5, 1.0]


def _feed_outcomes(config):
    """What each refused or unusual feed gives in a session whose feed structure already ran twice."""
    graph, t = _feed_graph()
    good = {t["x"]: [[1.0, 2.0, 3.0]], t["n"]: 1, t["flag"]: True, t["word"]: "a"}
    refused = {
        "shape": {t["x"]: [1.0, 2.0, 3.0]},
        "int range": {t["n"]: 2**40},
        "int as bool": {t["flag"]: 2},
        "tensor value": {t["n"]: t["fixed"]},
        "not a number": {t["x"]: [["a", "b", "c"]]},
    }
    outcomes = {}
    with v1.Session(graph=graph, config=config) as sess:
        for _ in range(3):
            sess.run(t["fetches"], good)
        for name, change in refused.items():
            with pytest.raises(Exception) as error:
                sess.run(t["fetches"], {**good, **change})
            outcomes[name] = (type(error.value), str(error.value))
        for _ in range(3):
            with pytest.raises(Exception) as error:
                sess.run(t["half"], {t["fixed"]: [0.0, 0.0]})
        outcomes["not feedable"] = (type(error.value), str(error.value))
        for _ in range(3):
            with pytest.raises(Exception) as error:
                sess.run(t["half"], {"half": [0.0, 0.0]})
        outcomes["operation name"] = (type(error.value), str(error.value))
        fed_fetch = [sess.run([t["x"], t["fetches"]["sum"]], {t["x"]: [[1.0, 1.0, 1.0]], t["n"]: 2}) for _ in range(3)]
        outcomes["fed fetch"] = (fed_fetch[-1][0].tolist(), fed_fetch[-1][1].tolist())
        twice = {t["x"]: [[1.0, 2.0, 3.0]], "x:0": np.ones((2, 3)), t["n"]: 1}
        outcomes["fed twice"] = [sess.run(t["fetches"]["shape"], twice).tolist() for _ in range(3)]
        assert sess.run(t["fetches"], good)["sum"].tolist() == [6.0]  # the session still runs
    return outcomes


def test_feeds_session_run_refuses_raise_its_own_errors():
    plain, bridged = _feed_outcomes(None), _feed_outcomes(npu_config())
    assert bridged == plain
    assert bridged["shape"][0] is ValueError and "Cannot feed value of shape (3,)" in bridged["shape"][1]
    assert bridged["int range"][0] is bridged["int as bool"][0] is bridged["tensor value"][0] is TypeError
    assert bridged["not feedable"] == (ValueError, "Tensor fixed:0 may not be fed.")
    assert bridged["operation name"][0] is TypeError
    assert bridged["fed fetch"] == ([[1.0, 1.0, 1.0]], [6.0])
    assert bridged["fed twice"] == [[2, 3]] * 3  # the last value given for the tensor


def test_an_error_in_a_repeated_run_is_the_error_session_run_raises():
    messages = []
    for config in (None, npu_config()):
        graph, t = _counter_graph(check=True)
        with v1.Session(graph=graph, config=config) as sess:
            sess.run(t["init"])
            for _ in range(3):
                sess.run([t["check"], t["step"]])
            with pytest.raises(tf.errors.InvalidArgumentError) as raised:
                sess.run([t["check"], t["step"]])
            messages.append((raised.value.message, raised.value.op, raised.value.node_def))
    assert "too many steps" in messages[1][0]
    assert messages[0][0] == messages[1][0]
    assert [(op is None, node is None) for _, op, node in messages] == [(True, True)] * 2


def test_a_repeated_run_fills_run_metadata_and_follows_its_options():
    graph, t = _counter_graph()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        sess.run(t["init"])
        traced = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE)
        for _ in range(2):
            sess.run(t["step"], options=traced)
        metadata = config_pb2.RunMetadata()
        assert sess.run(t["step"], options=traced, run_metadata=metadata) == 3
        assert len(metadata.step_stats.dev_stats) > 0
        plain_metadata = config_pb2.RunMetadata()
        assert sess.run(t["step"], run_metadata=plain_metadata) == 4
        assert len(plain_metadata.step_stats.dev_stats) == 0


def test_a_closed_session_raises_tensorflows_error():
    graph, t = _counter_graph()
    sess = v1.Session(graph=graph, config=npu_config())
    sess.run(t["init"])
    for _ in range(3):
        sess.run(t["step"])
    sess.close()
    with pytest.raises(RuntimeError, match="Attempted to use a closed Session"):
        sess.run(t["step"])


def test_many_structures_and_uncommon_fetches_still_give_right_values(fetch_handlers):
    graph, t = _counter_graph()
    with graph.as_default():
        constants = [tf.constant(float(i)) for i in range(repeated_runs.MAX_STRUCTURES + 10)]
        sparse = tf.SparseTensor([[0, 0]], [7.0], [2, 2])
        ordered = collections.OrderedDict(a=constants[0], b=constants[1])
    with v1.Session(graph=graph, config=npu_config()) as sess:
        sess.run(t["init"])
        for _ in range(3):
            assert [sess.run([c]) for c in constants] == [[float(i)] for i in range(len(constants))]
            assert sess.run(sparse).values.tolist() == [7.0]
            assert sess.run(ordered) == collections.OrderedDict(a=0.0, b=1.0)
        fetch_handlers.clear()
        sess.run([constants[0]])
        sess.run([constants[-1]])  # beyond the callables kept: session.run as usual
        assert len(fetch_handlers) == 1


def test_structure_keys_tell_structures_apart():
    graph, t = _counter_graph()
    key = repeated_runs.structure_key
    assert key([t["step"], t["total"]]) == key([t["step"], t["total"]])
    assert key([t["step"], t["total"]]) != key((t["step"], t["total"]))
    assert key((t["step"], t["total"])) != key(Pair(t["step"], t["total"]))
    assert key({"a": t["step"]}) != key({"b": t["step"]}) != key({"a": t["total"]})
    assert key("step_value:0") != key("total_value:0")
    for uncommon in (collections.OrderedDict(a=t["step"]), [t["step"], 1.0], {"a": [object()]}, None):
        assert key(uncommon) is None
    feed_key = repeated_runs.run_key
    x = graph.get_tensor_by_name("x:0")
    assert feed_key(t["step"], {x: 1.0}) == feed_key(t["step"], {x: 2.0}) != feed_key(t["step"], {"x:0": 1.0})
    assert feed_key(t["step"], None) == feed_key(t["step"], {}) != feed_key(t["step"], {x: 1.0})
    assert feed_key(t["step"], collections.OrderedDict([(x, 1.0)])) is None
    assert feed_key(t["step"], {(x, x): (1.0, 1.0)}) is None
