"""The session bridge: which sessions are bridged, what the bridged config contains, and that the C++
NpuOptimizer Grappler pass really runs on the graphs of bridged sessions (and only on those)."""

import logging

import pytest
import tensorflow as tf
from helpers.config import npu_config
from tensorflow.python.framework import config as tf_config

from npu_bridge.core.plan import pass_contract
from npu_bridge.core.runtime import native_library
from npu_bridge.core.runtime.errors import NpuOptionError
from npu_bridge.core.session import bridge

v1 = tf.compat.v1


def pass_stats():
    return native_library.read_json("npu_bridge_pass_stats_json")


def small_graph():
    graph = tf.Graph()
    with graph.as_default():
        a = v1.placeholder(tf.float32, [2], name="a")
        out = a * 2.0
    return graph, a, out


def test_plain_session_with_npu_optimizer_runs_the_grappler_pass():
    graph, a, out = small_graph()
    before = pass_stats()
    with v1.Session(graph=graph, config=npu_config(precision_mode="allow_fp32_to_fp16")) as sess:
        assert list(sess.run(out, {a: [1.0, 2.0]})) == [2.0, 4.0]
    after = pass_stats()
    assert after["init_calls"] > before["init_calls"]
    assert after["optimize_calls"] > before["optimize_calls"]
    assert "precision_mode" in after["last_option_keys"]


def test_one_node_graph_is_optimized_too():
    graph = tf.Graph()
    with graph.as_default():
        const = tf.constant(3.0)
    before = pass_stats()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        assert sess.run(const) == 3.0
    after = pass_stats()
    assert after["optimize_calls"] > before["optimize_calls"]
    assert after["last_node_count"] >= 1


def test_session_without_npu_optimizer_is_untouched():
    graph, a, out = small_graph()
    config = v1.ConfigProto(allow_soft_placement=True)
    before = pass_stats()
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(out, {a: [1.0, 1.0]})
        assert getattr(sess, bridge.OPTIONS_ATTRIBUTE) is None
        assert sess._config == config
    assert pass_stats()["optimize_calls"] == before["optimize_calls"]


def test_user_config_is_not_modified_and_entries_are_merged():
    config = npu_config(precision_mode="allow_fp32_to_fp16")
    second = config.graph_options.rewrite_options.custom_optimizers.add()
    second.name = "NpuOptimizer"
    second.parameter_map["precision_mode"].s = b"must_keep_origin_dtype"
    original = v1.ConfigProto()
    original.CopyFrom(config)
    graph, _, _ = small_graph()
    with v1.Session(graph=graph, config=config) as sess:
        used = sess._config
        options = getattr(sess, bridge.OPTIONS_ATTRIBUTE)
    assert config == original
    entries = [c for c in used.graph_options.rewrite_options.custom_optimizers if c.name == "NpuOptimizer"]
    assert len(entries) == 1
    assert entries[0].parameter_map["precision_mode"].s == b"must_keep_origin_dtype"
    assert entries[0].parameter_map[pass_contract.KEY_BY_FIELD["validated"].name].b
    assert used.graph_options.rewrite_options.min_graph_nodes == -1
    assert options.get("precision_mode") == "must_keep_origin_dtype"


def test_bad_option_raises_at_session_creation():
    graph, _, _ = small_graph()
    with pytest.raises(NpuOptionError) as info:
        v1.Session(graph=graph, config=npu_config(op_select_implmode="fastest"))
    message = str(info.value)
    assert "op_select_implmode" in message and "fastest" in message and "high_precision" in message


def test_interactive_session_is_bridged():
    graph, a, out = small_graph()
    before = pass_stats()
    sess = v1.InteractiveSession(graph=graph, config=npu_config())
    try:
        assert getattr(sess, bridge.OPTIONS_ATTRIBUTE) is not None
        sess.run(out, {a: [1.0, 1.0]})
    finally:
        sess.close()
    assert pass_stats()["optimize_calls"] > before["optimize_calls"]


def test_monitored_training_session_is_bridged(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        step = v1.train.get_or_create_global_step()
        train = v1.assign_add(step, 1)
        before = pass_stats()
        with v1.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path),
            config=npu_config(),
            save_checkpoint_steps=None,
            save_summaries_steps=None,
            log_step_count_steps=None,
        ) as sess:
            for _ in range(3):
                sess.run(train)
            raw = sess._tf_sess()
            assert getattr(raw, bridge.OPTIONS_ATTRIBUTE) is not None
    assert pass_stats()["optimize_calls"] > before["optimize_calls"]


def test_npu_init_style_injection_bridges_sessions_without_config():
    graph, a, out = small_graph()
    bridge.inject_npu_config(True)
    with v1.Session(graph=graph) as sess:
        assert getattr(sess, bridge.OPTIONS_ATTRIBUTE) is not None
        assert sess._config.allow_soft_placement
        sess.run(out, {a: [1.0, 1.0]})


def test_session_fails_loudly_when_library_is_not_loaded(monkeypatch):
    monkeypatch.setattr(native_library, "is_loaded", lambda: False)
    graph, _, _ = small_graph()
    with pytest.raises(RuntimeError, match="C\\+\\+ library is not loaded"):
        v1.Session(graph=graph, config=npu_config())


def test_unknown_key_is_logged_and_ignored(npu_log):
    graph, a, out = small_graph()
    with v1.Session(graph=graph, config=npu_config(precission_mode="force_fp32")) as sess:
        options = getattr(sess, bridge.OPTIONS_ATTRIBUTE)
        sess.run(out, {a: [1.0, 1.0]})
    assert "precission_mode" in options.unknown
    assert any("precission_mode" in m and "precision_mode" in m for m in npu_log)


def test_ascend_log_level_silences_warnings(monkeypatch, npu_log):
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "3")
    graph, _, _ = small_graph()
    v1.Session(graph=graph, config=npu_config(some_unknown_option_xyz="1")).close()
    assert logging.getLogger("npu_bridge").level == logging.ERROR
    assert not any("some_unknown_option_xyz" in m for m in npu_log)
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "1")
    v1.Session(graph=graph, config=npu_config(another_unknown_option_xyz="1")).close()
    assert logging.getLogger("npu_bridge").level == logging.INFO
    assert any("another_unknown_option_xyz" in m for m in npu_log)
    monkeypatch.delenv("ASCEND_GLOBAL_LOG_LEVEL")
    v1.Session(graph=graph, config=npu_config()).close()
    assert logging.getLogger("npu_bridge").level == logging.WARNING


def test_deterministic_enables_tensorflow_op_determinism():
    graph, a, out = small_graph()
    with v1.Session(graph=graph, config=npu_config(deterministic=1)) as sess:
        sess.run(out, {a: [1.0, 1.0]})
    try:
        assert tf_config.is_op_determinism_enabled()
    finally:
        tf_config.disable_op_determinism()
