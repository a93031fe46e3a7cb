"""``keras.utils.multi_gpu_model`` of TensorFlow 1.15 / Keras 2.2-2.3 (removed in TensorFlow 2.4), on tf_keras.

Single-machine data parallelism: every batch is cut into one slice per GPU, a replica of the model runs on each
slice under ``/gpu:<id>``, and the replicas' outputs are concatenated back into one batch (on ``/cpu:0``, or on the
first GPU when ``cpu_merge=False``). The returned model shares the weights of ``model``. As in 1.15, ``gpus`` (a
count, or a list of GPU ids) must name at least two GPUs, and ``/cpu:0`` and every ``/gpu:<id>`` must be devices
of this machine, else ValueError: on a machine without GPUs (the CPU this plugin runs on) every call raises,
which scripts catch to keep the single-device model. ``add`` puts it on tf_keras' v1 ``keras.utils`` (add-only).
"""

import tensorflow as tf

from npu_bridge.core.runtime import after_import
from npu_bridge.core.runtime.errors import NpuArgumentError

# the tf_keras module the TF1 mode's tf.keras.utils is, which its keras.utils and tensorflow.python.keras.utils
# answer from first (TensorFlow 2.4+ and so the TF2 adapter's tf.keras have no multi_gpu_model)
_HOMES = ("tf_keras.api._v1.keras.utils",)


def add():
    """Adds ``multi_gpu_model`` to the Keras ``utils`` modules when they are imported (nothing that exists is
    replaced)."""
    for name in _HOMES:
        after_import.when_imported(name, _add_to)


def _add_to(module):
    if not hasattr(module, "multi_gpu_model"):
        module.multi_gpu_model = multi_gpu_model


def _available_devices():
    """This machine's devices, as 1.15 normalized them: ``["/cpu:0", "/gpu:0", ...]``."""
    return [_normalized(device.name) for device in tf.config.list_logical_devices()]


def _normalized(name):
    """A device name as 1.15 compared them: ``/job:localhost/replica:0/task:0/device:GPU:1`` -> ``/gpu:1``."""
    return "/" + name.lower().rpartition("device:")[2]


def multi_gpu_model(model, gpus, cpu_merge=True, cpu_relocation=False):
    """Replicates ``model`` on ``gpus`` GPUs (a count >= 2, or a list of at least two GPU ids).

    Args:
      model: a Keras model.
      gpus: the number of GPUs (ids 0..gpus-1), or the list of GPU ids to use.
      cpu_merge: concatenate the replicas' outputs on ``/cpu:0`` (else on the first GPU).
      cpu_relocation: rebuild the model's weights on ``/cpu:0`` first (a clone of ``model``).
    Returns:
      A Keras model with the inputs of ``model`` whose outputs are the replicas' outputs, concatenated in batch
      order, each named as the output of ``model`` it merges (repeated names get ``_1``, ``_2``, ...).
    Raises:
      ValueError: ``gpus`` names fewer than two GPUs, or a needed device is not on this machine.
    """
    import tf_keras  # only when used: tf_keras costs a second to import

    if isinstance(gpus, (list, tuple)):
        gpu_ids = list(gpus)
        count = len(gpu_ids)
    else:
        count = gpus
        gpu_ids = list(range(gpus)) if gpus > 1 else []
    if count <= 1:
        raise NpuArgumentError(
            f"multi_gpu_model(gpus={gpus!r}): replicating the model pays only on two GPUs or more; call it with "
            "gpus >= 2 (or a list of at least two GPU ids), or use the model as it is"
        )
    wanted = ["/cpu:0", *(f"/gpu:{i}" for i in gpu_ids)]
    available = _available_devices()
    lacking = [device for device in wanted if device not in available]
    if lacking:
        raise NpuArgumentError(
            f"multi_gpu_model(gpus={gpus!r}) needs the devices {wanted}, but this machine has only {available} "
            f"(missing: {lacking}); use fewer gpus, or the model as it is"
        )
    if cpu_relocation:
        with tf.device("/cpu:0"):
            model = tf_keras.models.clone_model(model)

    replica_outputs = [[] for _ in model.outputs]
    for index, gpu in enumerate(gpu_ids):
        with tf.device(f"/gpu:{gpu}"), tf.name_scope(f"replica_{gpu}"):
            sliced = [
                tf_keras.layers.Lambda(
                    _batch_slice, output_shape=tuple(x.shape.as_list())[1:], arguments={"i": index, "parts": count}
                )(x)
                for x in model.inputs
            ]
            outputs = model(sliced)
            for position, output in enumerate(outputs if isinstance(outputs, list) else [outputs]):
                replica_outputs[position].append(output)

    with tf.device("/cpu:0" if cpu_merge else f"/gpu:{gpu_ids[0]}"):
        merged = [
            tf_keras.layers.concatenate(outputs, axis=0, name=name)
            for name, outputs in zip(_unique_names(model.output_names), replica_outputs)
        ]
    return tf_keras.models.Model(model.inputs, merged)


def _batch_slice(data, i, parts):
    """Slice ``i`` of ``parts`` along the batch: equal slices of ``batch // parts`` rows, the last one also taking
    the remainder."""
    batch = tf.shape(data)[0]
    step = batch // parts
    end = batch if i == parts - 1 else (i + 1) * step
    return data[i * step : end]


def _unique_names(names):
    """Output names with the repeated ones numbered in order (``["y", "y", "z"]`` -> ``["y_1", "y_2", "z"]``)."""
    repeated = {name for name in names if names.count(name) > 1}
    seen = {}
    unique = []
    for name in names:
        if name in repeated:
            seen[name] = seen.get(name, 0) + 1
            name = f"{name}_{seen[name]}"
        unique.append(name)
    return unique
