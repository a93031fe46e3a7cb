"""initialize_system / shutdown_system, npu_resource_init and friends: process-wide system semantics."""

import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.processes import run_python

from hccl.manage import api as hccl_api
from npu_bridge.core.runtime import native_library, system
from npu_bridge.core.runtime.errors import NotInitializedError
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu import npu_plugin

v1 = tf.compat.v1


def run_op(make_op, config=None):
    graph = tf.Graph()
    with graph.as_default():
        op = make_op()
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(op)


def test_initialize_system_initializes_with_the_sessions_init_options():
    assert not system.is_initialized()
    run_op(npu_ops.initialize_system, npu_config(precision_mode="force_fp32", op_debug_level=1))
    state = system.state()
    assert state.initialized and state.source == "NPUInit" and not state.is_global
    assert state.init_options["precision_mode"] == "force_fp32"
    assert state.init_options["op_debug_level"] == 1


def test_initialize_system_without_npu_optimizer_uses_defaults():
    run_op(npu_ops.initialize_system)
    state = system.state()
    assert state.initialized and state.init_options == {}


def test_the_library_keeps_only_the_token_of_the_init_options():
    run_op(npu_ops.initialize_system, npu_config(precision_mode="force_fp32"))
    raw = native_library.read_json("npu_bridge_system_state_json")
    assert set(raw) == {"initialized", "global", "source", "init_token", "init_count"}
    assert "force_fp32" not in str(raw)
    assert system.init_options_for(raw["init_token"]) == system.state().init_options != {}


def test_equal_init_options_share_a_token_and_an_unknown_token_reads_as_the_defaults():
    token = system.register_init_options({"precision_mode": "force_fp32", "op_debug_level": 1})
    assert token == system.register_init_options({"op_debug_level": 1, "precision_mode": "force_fp32"})
    assert token != system.register_init_options({"precision_mode": "force_fp16", "op_debug_level": 1})
    assert token != system.register_init_options({"precision_mode": "force_fp32", "op_debug_level": True})
    system.init_options_for(token)["precision_mode"] = "changed"  # a copy
    assert system.init_options_for(token) == {"op_debug_level": 1, "precision_mode": "force_fp32"}
    assert system.init_options_for("") == {}
    native_library.c_api().npu_bridge_system_initialize(b"0123456789abcdef", b"resource_init", 1)
    state = system.state()
    assert state.initialized and state.init_options == {}


def test_initialization_is_idempotent_and_first_init_options_win(npu_log):
    run_op(npu_ops.initialize_system, npu_config(precision_mode="force_fp32"))
    count = system.state().init_count
    run_op(npu_ops.initialize_system, npu_config(precision_mode="must_keep_origin_dtype"))
    assert system.state().init_count == count
    assert system.state().init_options["precision_mode"] == "force_fp32"
    graph = tf.Graph()
    with graph.as_default():
        tf.constant(1.0)
    sess = v1.Session(graph=graph, config=npu_config(precision_mode="allow_mix_precision"))
    assert sess._npu_bridge_options.get("precision_mode") == "force_fp32"
    sess.close()
    assert any("precision_mode" in m and "init option" in m for m in npu_log)


def test_shutdown_system_then_hccl_queries_fail():
    run_op(npu_ops.initialize_system, npu_config())
    assert hccl_api.get_rank_size() == 1
    run_op(npu_ops.shutdown_system, npu_config())
    assert not system.is_initialized()
    with pytest.raises(NotInitializedError, match="initialize_system"):
        hccl_api.get_rank_size()


def test_first_bridged_graph_run_initializes_lazily():
    graph = tf.Graph()
    with graph.as_default():
        value = tf.constant(2.0) * 3.0
    with v1.Session(graph=graph, config=npu_config(precision_mode="force_fp16")) as sess:
        assert not system.is_initialized()
        sess.run(value)
    state = system.state()
    assert state.initialized and state.source == "graph"
    assert state.init_options["precision_mode"] == "force_fp16"


def test_unbridged_session_does_not_initialize():
    graph = tf.Graph()
    with graph.as_default():
        value = tf.constant(2.0) * 3.0
    with v1.Session(graph=graph) as sess:
        sess.run(value)
    assert not system.is_initialized()


def test_npu_resource_init_is_global_and_ops_become_no_ops():
    assert npu_plugin.npu_resource_init(precision_mode="allow_fp32_to_fp16") is True
    state = system.state()
    assert state.is_global and state.source == "resource_init"
    assert state.init_options["precision_mode"] == "allow_fp32_to_fp16"
    run_op(npu_ops.shutdown_system, npu_config())
    assert system.is_initialized()
    run_op(npu_ops.initialize_system, npu_config(precision_mode="force_fp32"))
    assert system.state().init_options["precision_mode"] == "allow_fp32_to_fp16"
    npu_plugin.npu_resource_shutdown()
    assert not system.is_initialized()


def test_npu_resource_init_validates_arguments():
    with pytest.raises(ValueError, match="profiling_options must be set when use profiling"):
        npu_plugin.npu_resource_init(enable_profiling=True)
    with pytest.raises(ValueError, match="graph_run_mode"):
        npu_plugin.npu_resource_init(graph_run_mode=2)
    with pytest.raises(ValueError, match="aoe_mode"):
        npu_plugin.npu_resource_init(aoe_mode="3")
    assert not system.is_initialized()


def test_npu_close_shuts_everything_down():
    npu_plugin.npu_resource_init()
    npu_plugin.npu_close()
    assert not system.is_initialized()


@pytest.mark.slow
def test_system_ops_raise_in_eager_mode():
    result = run_python("""
        import tensorflow as tf
        from npu_bridge.estimator import npu_ops
        for make in (npu_ops.initialize_system, npu_ops.shutdown_system, npu_ops.NPUInit):
            try:
                make()
            except RuntimeError as e:
                print("RuntimeError:", e)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("is not compatible with eager execution") == 3
    assert "tf.NPUInit() is not compatible with eager execution." in result.stdout


@pytest.mark.slow
def test_clean_up_at_exit_runs_npu_close():
    result = run_python("""
        import npu_bridge
        from npu_bridge.core.runtime import close_callbacks
        from npu_bridge.estimator.npu import npu_plugin
        close_callbacks.register(lambda: print("closed at exit"))
        npu_plugin.npu_resource_init()
    """)
    assert result.returncode == 0, result.stderr
    assert "closed at exit" in result.stdout


def test_npu_resource_init_takes_init_options_with_the_table_s_defaults():
    import inspect

    from npu_bridge.core.options.table import OPTIONS
    from npu_bridge.core.session import resource

    parameters = inspect.signature(resource.npu_resource_init).parameters.values()
    for parameter in parameters:
        option = OPTIONS[resource.ARGUMENT_OPTIONS.get(parameter.name, parameter.name)]
        assert option.stage == "init", parameter.name
        # upstream's signature writes op_debug_level's documented default out; the table leaves it unset
        if parameter.default is not None and parameter.name != "op_debug_level":
            assert parameter.default == option.default, parameter.name
