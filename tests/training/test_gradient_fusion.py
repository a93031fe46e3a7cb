"""Gradient fusion: segments by the split strategy, and how many collectives a 100-variable model pays."""

import pytest
import tensorflow as tf

from hccl.split import api as split
from npu_bridge.core.runtime import system
from npu_bridge.core.training.distributed import fusion, optimizers
from npu_bridge.core.world import split_strategy
from npu_bridge.estimator.npu.npu_optimizer import NPUDistributedOptimizer, npu_allreduce


@pytest.fixture
def two_ranks(monkeypatch):
    """Rank 0 of 2; graphs are only built, with TensorFlow's collectives (NPU_BRIDGE_COLLECTIVES=tf: two ranks of
    one host would otherwise take the shared-memory segment, whose ops have other names)."""
    monkeypatch.setenv("NPU_BRIDGE_COLLECTIVES", "tf")
    monkeypatch.setenv("RANK_SIZE", "2")
    monkeypatch.setenv("RANK_ID", "0")
    monkeypatch.setenv("DEVICE_ID", "0")


BY_SIZE, BY_IDX = split_strategy.BY_SIZE, split_strategy.BY_INDEX


@pytest.mark.parametrize(
    "sizes, kind, values, expected",
    [
        ([4] * 10, BY_SIZE, (96.54, 3.46), [list(range(10))]),
        ([200] + [1] * 4, BY_SIZE, (96.54, 3.46), [[0], [1, 2, 3, 4]]),
        ([100] + [1] * 4, BY_SIZE, (96.54, 3.46), [[0, 1], [2, 3, 4]]),
        ([10] * 4, BY_SIZE, (50, 50), [[0, 1], [2, 3]]),
        ([10] * 4, BY_SIZE, (0, 100), [[0, 1, 2, 3]]),
        ([10] * 6, BY_IDX, (1, 3), [[0, 1], [2, 3], [4, 5]]),
        ([10] * 3, BY_IDX, (0, 7), [[0], [1, 2]]),
        ([10] * 3, BY_IDX, (2,), [[0, 1, 2]]),
    ],
)
def test_segments(sizes, kind, values, expected):
    assert fusion.segments(sizes, split_strategy.SplitStrategy(kind, values)) == expected


def _collectives_for_model(optimizer_factory, variables=100):
    with tf.Graph().as_default() as graph:
        weights = [tf.Variable(tf.ones([10 + i])) for i in range(variables)]
        loss = tf.add_n([tf.reduce_sum(w * w) for w in weights])
        optimizer_factory().minimize(loss)
    return [op for op in graph.get_operations() if op.type == "CollectiveReduce"]


def test_a_100_variable_model_pays_two_collectives_by_default(two_ranks):
    fused = _collectives_for_model(lambda: NPUDistributedOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1)))
    assert len(fused) == 2
    assert sum(op.inputs[0].shape.num_elements() for op in fused) == sum(10 + i for i in range(100))


def test_the_split_strategy_of_the_world_group_is_followed(two_ranks):
    system.initialize({}, "resource_init", is_global=True)
    split.set_split_strategy_by_idx([9, 49])
    assert (
        len(_collectives_for_model(lambda: NPUDistributedOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1))))
        == 3
    )
    split.set_split_strategy_by_size([25, 25, 25, 25])
    assert (
        len(_collectives_for_model(lambda: NPUDistributedOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1))))
        == 4
    )


def test_a_split_strategy_set_before_initialization_is_followed(two_ranks):
    def model():
        return _collectives_for_model(lambda: NPUDistributedOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1)))

    split.set_split_strategy_by_idx([9, 49])
    assert len(model()) == 3
    system.initialize({}, "resource_init", is_global=True)
    assert len(model()) == 3


def test_a_split_strategy_by_size_set_before_initialization_is_followed(two_ranks):
    split.set_split_strategy_by_size([25, 25, 25, 25])
    system.initialize({}, "resource_init", is_global=True)
    assert len(_collectives_for_model(lambda: NPUDistributedOptimizer(tf.compat.v1.train.AdamOptimizer()))) == 4


def test_per_tensor_allreduce_without_fusion(two_ranks):
    with tf.Graph().as_default() as graph:
        npu_allreduce([tf.ones([3]), tf.ones([4]), tf.ones([2], tf.int32)], fusion=0)
        npu_allreduce([tf.ones([3]), tf.ones([4]), tf.ones([2], tf.int32)])  # fused: one per dtype
    assert len([op for op in graph.get_operations() if op.type == "CollectiveReduce"]) == 3 + 2


def test_sparse_gradients_are_gathered_not_reduced(two_ranks):
    with tf.Graph().as_default() as graph:
        table = tf.Variable(tf.zeros([10, 4]))
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, [1, 2]))
        grads = NPUDistributedOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1)).compute_gradients(loss)
    assert isinstance(grads[0][0], tf.IndexedSlices)
    types = sorted(op.type for op in graph.get_operations() if op.type.startswith("Collective"))
    assert types == ["CollectiveGather", "CollectiveGather"]


def test_one_rank_adds_no_collectives():
    assert _collectives_for_model(lambda: NPUDistributedOptimizer(tf.compat.v1.train.AdamOptimizer()), 5) == []


def test_sharding_balances_bytes_and_needs_enough_variables(two_ranks):
    assert optimizers.shard_owners([400, 100, 100, 100, 100], 2) == [0, 1, 1, 1, 1]
    assert optimizers.shard_owners([1, 1, 1], 3) == [0, 1, 2]
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        opt = NPUDistributedOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1), is_weight_update_sharding=True)
        with pytest.raises(
            ValueError,
            match="weight update sharding needs at least as many gradients as ranks; 1 gradients for 2 ranks",
        ):
            opt.minimize(v * v)


def test_keras_distribute_optimizer_needs_a_legacy_optimizer():
    from npu_bridge.estimator.npu.npu_optimizer import KerasDistributeOptimizer

    with pytest.raises(TypeError, match="optimizer must be a tf.keras.optimizers.legacy optimizer"):
        KerasDistributeOptimizer(tf.keras.optimizers.SGD())
    wrapped = KerasDistributeOptimizer(tf.keras.optimizers.legacy.SGD(0.5))
    assert wrapped.get_config()["learning_rate"] == 0.5
    assert wrapped.lr is wrapped._optimizer.lr
