"""``npu_strategy.NPUStrategy``: a one-device strategy whose replicas are the job's ranks.

As upstream, ``num_replicas_in_sync`` is the rank size and datasets are sharded by rank
(``dataset.shard(rank_size, rank_id)``); computation stays on this process's one device.
"""

from tensorflow.python.distribute import distribute_lib, one_device_strategy

from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.world import world


class NPUExtended(one_device_strategy.OneDeviceExtended):
    """The ``extended`` of NPUStrategy: one device, ``rank_size`` replicas, rank-sharded datasets."""

    def __init__(self, container_strategy, device):
        super().__init__(container_strategy, device)
        current = world.environment_world()
        self._rank_size, self._rank_id = current.rank_size, current.rank_id

    @property
    def _num_replicas_in_sync(self):
        return self._rank_size

    def _shard(self, dataset):
        return dataset.shard(self._rank_size, self._rank_id) if self._rank_size > 1 else dataset

    def _experimental_distribute_dataset(self, dataset, options):
        return super()._experimental_distribute_dataset(self._shard(dataset), options)

    def _make_dataset_iterator(self, dataset):
        return super()._make_dataset_iterator(self._shard(dataset))


class NPUStrategy(distribute_lib.StrategyV1):
    """Upstream's NPUStrategy (TF1 ``tf.distribute`` API).

    Args:
      device: must be "/cpu:0", as upstream.
    Raises:
      ValueError: another device.
      RankTableError: the rank environment is malformed.
    """

    def __init__(self, device="/cpu:0"):
        if device != "/cpu:0":
            raise NpuArgumentError(f'"device" only support "/cpu:0", got {device!r}')
        super().__init__(NPUExtended(self, device))


__all__ = ["NPUStrategy", "NPUExtended"]
