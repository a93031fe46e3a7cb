"""Upstream names that cannot work off the NPU: they import, raise a clear error, and docs/fidelity.md lists them."""

import pytest
from tensorflow.core.framework import types_pb2

from npu_bridge.core.runtime import doc_blocks, unsupported
from npu_bridge.core.runtime.errors import NotSupportedOffNpuError
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu import npu_plugin
from npu_bridge.npu_cpu import npu_cpu_ops


def test_unsupported_names_raise_with_the_reason():
    with pytest.raises(NotSupportedOffNpuError, match="npu_onnx_graph_op is not supported off the NPU: it compiles"):
        npu_ops.npu_onnx_graph_op([], "model.onnx")
    with pytest.raises(NotImplementedError, match="init_rdma_pool is not supported off the NPU: .*RDMA"):
        npu_plugin.init_rdma_pool(1024)
    with pytest.raises(NotSupportedOffNpuError, match="npu_cpu_ops.embedding_hash_table_lookup is not supported"):
        npu_cpu_ops.embedding_hash_table_lookup()


def test_host_embedding_scripts_import_lru_cache_and_tf_adapter():
    import npu_bridge.npu_cpu.lru_cache
    import npu_bridge.tf_adapter
    from npu_bridge import tf_adapter
    from npu_bridge.tf_adapter import DT_FLOAT, DT_INT64  # as scripts write it

    assert (DT_FLOAT, DT_INT64) == (types_pb2.DT_FLOAT, types_pb2.DT_INT64) == (1, 9)
    assert (tf_adapter.DT_DOUBLE, tf_adapter.DT_INT32) == (2, 3)
    assert set(tf_adapter.__all__) == set(types_pb2.DataType.keys())
    with pytest.raises(NotSupportedOffNpuError, match=r"npu_bridge.npu_cpu.lru_cache.lru_cache is not supported"):
        npu_bridge.npu_cpu.lru_cache.lru_cache(10)
    with pytest.raises(NotSupportedOffNpuError, match=r"npu_bridge.tf_adapter.PluginInit is not supported.*SWIG"):
        npu_bridge.tf_adapter.PluginInit({})
    assert not hasattr(tf_adapter, "__path__")
    assert {"npu_bridge.npu_cpu.lru_cache.*", "npu_bridge.tf_adapter.*"} <= set(unsupported.registry())


def test_docs_list_every_unsupported_name():
    assert unsupported.DOCS_PAGE == doc_blocks.DOCS_DIR / "fidelity.md"
    assert (
        doc_blocks.read_block(unsupported.DOCS_BLOCK, unsupported.DOCS_PAGE) == unsupported.render_markdown().strip()
    ), (
        "docs/fidelity.md's 'not supported off the NPU' list is stale: run "
        "`python -m npu_bridge.core.runtime.unsupported --write-docs`"
    )
