"""The import surface: `from npu_bridge.npu_init import *`, every upstream module path, and the session-class
patch and graph-manager scope of npu_config / scoped_graph_manager."""

import json
import logging

import pytest
from helpers.processes import run_python

from npu_bridge.core.runtime import api_surface

# Everything upstream's npu_init exports, plus npu_session_config_init (2021).
NPU_INIT_NAMES = """
NPURunConfig ProfilingConfig MemoryConfig DumpConfig DynamicInputConfig decorator_tf_session NPUEstimator
NPUEstimatorSpec NPUCheckpointSaverHook NPUOutputTensorHook NPUBroadcastGlobalVariablesHook SetIterationsVarHook
TellMeStepOrLossHook NPUDistributedOptimizer KerasDistributeOptimizer npu_distributed_optimizer_wrapper
NPUOptimizer npu_allreduce NPULossScaleOptimizer FixedLossScaleManager ExponentialUpdateLossScaleManager
NPUBroadcastGlobalVariablesCallback npu_ops npu_rnn npu_scope keras_to_npu npu_strategy util npu_plugin
npu_unary_ops hccl_ops profiler npu_cpu_ops scoped_graph_manager config_pb2 rewriter_config_pb2 RewriterConfig
session session_run_hook backend tf os create_group destroy_group get_rank_size get_local_rank_size get_rank_id
get_local_rank_id get_world_rank_from_group_rank get_group_rank_from_world_rank set_split_strategy_by_idx
set_split_strategy_by_size experimental_options npu_hooks_append npu_callbacks_append npu_config_proto
npu_graph_options npu_optimizer_options npu_session_config_init npu_run_config_init set_keras_session_npu_config
init_resource shutdown_resource close_session get_npu_rank_id get_npu_local_rank_id get_npu_rank_size
get_npu_local_rank_size NpuEmptyHook npu_keras_optimizer npu_tf_optimizer npu_clear_session
""".split()


@pytest.mark.slow
def test_star_import_gives_every_upstream_name():
    result = run_python(f"""
        from npu_bridge.npu_init import *
        import tensorflow
        missing = [n for n in {NPU_INIT_NAMES!r} if n not in globals()]
        print("missing", missing)
        print("tf is compat.v1", tf is tensorflow.compat.v1)
        print("eager", tensorflow.executing_eagerly())
        print("keras backend", backend.__name__)
        print("RewriterConfig OFF", RewriterConfig.OFF == rewriter_config_pb2.RewriterConfig.OFF)
    """)
    assert result.returncode == 0, result.stderr
    assert "missing []" in result.stdout
    assert "tf is compat.v1 True" in result.stdout
    assert "eager False" in result.stdout
    assert "keras backend tf_keras" in result.stdout
    assert "RewriterConfig OFF True" in result.stdout


@pytest.mark.slow
def test_sessions_after_npu_init_are_npu_sessions():
    result = run_python("""
        from npu_bridge.npu_init import *
        c = tf.constant(1.0) + 1.0
        with tf.Session() as sess:
            print("value", sess.run(c))
            print("bridged", sess._npu_bridge_options is not None)
        print("initialized lazily", get_rank_size(), get_rank_id(), get_local_rank_size(), get_local_rank_id())
    """)
    assert result.returncode == 0, result.stderr
    assert "value 2.0" in result.stdout
    assert "bridged True" in result.stdout
    assert "initialized lazily 1 0 1 0" in result.stdout


@pytest.mark.slow
def test_init_resource_helpers():
    result = run_python("""
        from npu_bridge.npu_init import *
        try:
            get_npu_rank_id()
        except ValueError as e:
            print("before:", e)
        sess, shutdown = init_resource()
        print("ranks", get_npu_rank_id(), get_npu_local_rank_id(), get_npu_rank_size(), get_npu_local_rank_size())
        shutdown_resource(sess, shutdown)
        close_session(sess)
        try:
            get_rank_size()
        except ValueError as e:
            print("after shutdown:", e)
    """)
    assert result.returncode == 0, result.stderr
    assert "before:" in result.stdout and "init_resource()" in result.stdout
    assert "ranks 0 0 1 1" in result.stdout
    assert "after shutdown: get_rank_size" in result.stdout


@pytest.fixture(scope="module")
def import_report():
    """Imports every upstream module path in one fresh interpreter; returns {module: "ok" or the error}."""
    result = run_python(f"""
        import importlib, json
        report = {{}}
        for name in {list(api_surface.UPSTREAM_MODULES)!r}:
            try:
                importlib.import_module(name)
                report[name] = "ok"
            except Exception as e:
                report[name] = f"{{type(e).__name__}}: {{e}}"
        print(json.dumps(report))
    """)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("module", api_surface.UPSTREAM_MODULES)
def test_every_upstream_module_path_imports(import_report, module):
    assert import_report[module] == "ok"


@pytest.mark.slow
def test_set_npu_default_config_makes_every_later_session_an_npu_session():
    result = run_python("""
        import tensorflow as tf
        import npu_bridge
        from npu_bridge.estimator.npu import npu_config
        from npu_bridge.core.session.bridge import OPTIONS_ATTRIBUTE
        tf.compat.v1.disable_eager_execution()
        print("before", getattr(tf.compat.v1.Session(), OPTIONS_ATTRIBUTE) is not None)
        npu_config.set_npu_default_config()
        npu_config.set_npu_default_config()  # a second call changes nothing
        print("after", getattr(tf.compat.v1.Session(), OPTIONS_ATTRIBUTE) is not None)
    """)
    assert result.returncode == 0, result.stderr
    assert "before False" in result.stdout and "after True" in result.stdout


def test_scoped_graph_manager_is_a_scope_with_no_effect_here(npu_log):
    from npu_bridge.scoped_graph_manager.scoped_graph_manager import ScopedGraphManager

    logger = logging.getLogger("npu_bridge")
    saved_level = logger.level
    logger.setLevel(logging.INFO)
    try:
        with ScopedGraphManager("any", graph_id=3) as scope:
            assert isinstance(scope, ScopedGraphManager)
        with pytest.raises(KeyError):  # exceptions inside the scope propagate
            with ScopedGraphManager():
                raise KeyError("inside")
    finally:
        logger.setLevel(saved_level)
    assert any("ScopedGraphManager: no effect here" in m for m in npu_log)
