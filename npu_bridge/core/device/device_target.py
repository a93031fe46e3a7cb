"""Which backend a bridged session computes on: ``cpu``, ``gpu`` or ``ascend`` (the simulated Ascend backend).

Our extension to upstream's options (upstream ignores unknown keys, so scripts stay portable): the
``device_target`` option wins, then the ``NPU_BRIDGE_DEVICE_TARGET`` environment variable, then ``auto``,
which means GPU when TensorFlow sees one and CPU otherwise. The option is an init option, so like
``precision_mode`` the first initialization fixes it for the process.
"""

import os

from npu_bridge.core.runtime.errors import NpuOptionError

ENV_VARIABLE = "NPU_BRIDGE_DEVICE_TARGET"
DEVICE_TARGETS = ("auto", "cpu", "gpu", "ascend")  # the values of the device_target option (options/table.py)


def requested(options=None, environ=None):
    """Returns the requested target before ``auto`` is resolved.

    Args:
      options: the session's ``NpuOptions`` (or None).
      environ: mapping to read instead of ``os.environ``.
    Returns:
      One of ``DEVICE_TARGETS``.
    Raises:
      NpuOptionError: NPU_BRIDGE_DEVICE_TARGET holds something else.
    """
    if options is not None and options.is_set("device_target"):
        return options.get("device_target")
    environ = os.environ if environ is None else environ
    given = environ.get(ENV_VARIABLE, "")
    value = given.strip()
    if not value:
        return "auto"
    if value not in DEVICE_TARGETS:
        raise NpuOptionError(
            ENV_VARIABLE,
            given,
            ", ".join(DEVICE_TARGETS),
            "the environment variable chooses the backend when the option is not set",
        )
    return value


def resolve(options=None, environ=None):
    """Returns the backend that computes: "cpu", "gpu" or "ascend" (``auto`` resolved).

    Args:
      options: the session's ``NpuOptions`` (or None).
      environ: mapping to read instead of ``os.environ``.
    Raises:
      NpuOptionError: NPU_BRIDGE_DEVICE_TARGET holds an unknown value.
    """
    target = requested(options, environ)
    if target != "auto":
        return target
    import tensorflow as tf

    return "gpu" if tf.config.list_physical_devices("GPU") else "cpu"


def process_target(environ=None):
    """Returns the backend of this process as far as it is known before a session is created.

    The initialized system's device_target wins (it is an init option), then NPU_BRIDGE_DEVICE_TARGET, then
    ``auto``.

    Args:
      environ: mapping to read instead of ``os.environ``.
    Returns:
      "cpu", "gpu" or "ascend".
    """
    from npu_bridge.core.runtime import system

    state = system.state()
    if state.initialized and state.init_options.get("device_target") not in (None, "auto"):
        return state.init_options["device_target"]
    return resolve(None, environ)
