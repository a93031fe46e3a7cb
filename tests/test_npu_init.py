"""The import surface: `from npu_bridge.npu_init import *`, every upstream module path, and the names that
are not available yet (they import, raise a clear error when used, and the README lists them)."""

import json

import pytest
from conftest import run_python

from npu_bridge import api_surface, pending, readme_blocks
from npu_bridge.errors import NotAvailableError

# Reference section 1.2: everything upstream's npu_init exports, plus npu_session_config_init (2021).
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


@pytest.mark.parametrize("module", api_surface.UPSTREAM_MODULES)
def test_every_upstream_module_path_imports(import_report, module):
    assert import_report[module] == "ok"


def test_pending_names_raise_a_clear_error():
    api_surface.import_all()
    names = pending.registry()
    assert names, "nothing is pending"
    from npu_bridge.estimator import npu_ops  # pylint: disable=import-outside-toplevel

    if "npu_bridge.estimator.npu_ops.dropout" in names:
        with pytest.raises(NotAvailableError, match="npu_bridge.estimator.npu_ops.dropout is not available yet"):
            npu_ops.dropout(None, 0.5)


def test_readme_lists_every_pending_name():
    assert readme_blocks.read_block(pending.README_BLOCK) == pending.render_markdown().strip(), (
        "README's 'not available yet' list is stale: run `python -m npu_bridge.pending --write-readme`")
