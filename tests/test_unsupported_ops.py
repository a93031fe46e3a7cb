"""Upstream names that cannot work off the NPU: they import, raise a clear error, and the README lists them."""

import pytest

from npu_bridge.core.runtime import readme_blocks, unsupported
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


def test_readme_lists_every_unsupported_name():
    assert readme_blocks.read_block(unsupported.README_BLOCK) == unsupported.render_markdown().strip(), (
        "README's 'not supported off the NPU' list is stale: run `python -m npu_bridge.core.runtime.unsupported "
        "--write-readme`"
    )
