"""``tf.contrib.distribute.CollectiveAllReduceStrategy`` of TensorFlow 1.15: collective all-reduce, set up by GPU count.

The contrib class differed from core's ``MultiWorkerMirroredStrategy`` (TensorFlow 2.21's
``CollectiveAllReduceStrategyV1``, which it is) only in its constructor: ``num_gpus_per_worker`` replicas on each
worker's GPUs (0, the default: one replica on the CPU), the cluster read from ``TF_CONFIG`` (one local worker
without it). The other ``contrib.distribute`` names are ``tf.distribute``'s.
"""

from tensorflow.python.distribute import collective_all_reduce_strategy, collective_util
from tensorflow.python.distribute.cluster_resolver import SimpleClusterResolver, TFConfigClusterResolver

from npu_bridge.core.runtime.errors import NpuArgumentError


class CollectiveAllReduceStrategy(collective_all_reduce_strategy.CollectiveAllReduceStrategyV1):
    """Mirrored variables kept in sync by collective all-reduce, within and across workers.

    Args:
      num_gpus_per_worker: the GPUs of each worker that run a replica (0: the CPU runs one).
      communication: ``tf.distribute.experimental.CollectiveCommunication`` (``AUTO``, ``RING``, ``NCCL``).
    Raises:
      ValueError: ``num_gpus_per_worker`` is not a non-negative int.
    """

    def __init__(self, num_gpus_per_worker=0, communication=collective_util.CommunicationImplementation.AUTO):
        if isinstance(num_gpus_per_worker, bool) or not isinstance(num_gpus_per_worker, int) or num_gpus_per_worker < 0:
            raise NpuArgumentError(
                f"CollectiveAllReduceStrategy: num_gpus_per_worker={num_gpus_per_worker!r} must be an int >= 0 "
                "(0: one replica on the CPU)"
            )
        tf_config = TFConfigClusterResolver()
        resolver = SimpleClusterResolver(
            cluster_spec=tf_config.cluster_spec(),
            task_type=tf_config.task_type,
            task_id=tf_config.task_id,
            num_accelerators={"GPU": num_gpus_per_worker},
            rpc_layer=tf_config.rpc_layer,
        )
        super().__init__(communication=communication, cluster_resolver=resolver)
