"""Process-wide NPU system state: initialized or not, by whom, and with which init-stage options.

The state lives in the C++ library, so the ``NPUInit`` / ``NPUShutdown`` kernels run by ``sess.run`` and the
Python API (``npu_resource_init``, ``hccl.manage.api``) see the same thing. As on Ascend, the first
initialization fixes the init-stage options for the whole process; later initializations are no-ops.

Only Python reads the init-stage options, so they stay here: ``register_init_options`` files them under a token
(a session's plan carries it in the pass contract key ``_npu_bridge_init_token``), the library records the token
of the initialization in force, and ``state`` looks it up.

Sources of initialization:
  "NPUInit"        ``sess.run(npu_ops.initialize_system())``
  "graph"          the first run of a graph in a bridged session (upstream initializes GE lazily there)
  "resource_init"  ``npu_plugin.npu_resource_init`` (global: ``NPUInit``/``NPUShutdown`` become no-ops)
"""

import dataclasses
import hashlib
import json
import threading

from npu_bridge.core.runtime import native_library
from npu_bridge.core.runtime.errors import NotInitializedError

INIT_HINT = (
    "run `sess.run(npu_ops.initialize_system())` in a session configured with NpuOptimizer, "
    "or call `init_resource()` / `npu_plugin.npu_resource_init()`, first"
)

_registry_lock = threading.Lock()
_registered = {}  # token -> init options; never dropped, since the library may name any token a plan carried


@dataclasses.dataclass(frozen=True)
class SystemState:
    """A snapshot of the process-wide state.

    Attributes:
      initialized: whether the system is initialized now.
      is_global: initialized by ``npu_resource_init`` (NPUInit/NPUShutdown ops are then no-ops).
      source: what initialized it ("NPUInit", "graph", "resource_init"), "" when not initialized.
      init_options: the init-stage options in force (normalized option values), {} when not initialized.
      init_count: how many times the system has been initialized in this process.
    """

    initialized: bool
    is_global: bool
    source: str
    init_options: dict
    init_count: int


def state():
    """Returns the current ``SystemState``."""
    raw = native_library.read_json("npu_bridge_system_state_json")
    return SystemState(
        initialized=bool(raw["initialized"]),
        is_global=bool(raw["global"]),
        source=raw["source"],
        init_options=init_options_for(raw["init_token"]),
        init_count=int(raw["init_count"]),
    )


def register_init_options(init_options):
    """Keeps a set of init-stage options and returns the token that stands for it in the library.

    Equal options get the same token, in every process (it is a digest of their values): the registry keeps one
    entry per distinct set, and no token stands for other options than its own.

    Args:
      init_options: dict of normalized init-stage option values (bool, int or str).
    Returns:
      The token, a str.
    """
    text = json.dumps(init_options, sort_keys=True)
    token = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    with _registry_lock:
        _registered.setdefault(token, json.loads(text))
    return token


def init_options_for(token):
    """Returns a copy of the init-stage options registered under ``token``.

    {} for "" (an ``NPUInit`` of a session without NpuOptimizer: the defaults) and for a token this process did
    not register.
    """
    return dict(_registered.get(token, {}))


def is_initialized():
    """Returns True when the system is initialized."""
    return state().initialized


def require_initialized(api_name):
    """Raises unless the system is initialized.

    Args:
      api_name: the user-facing function that needs initialization, named in the error.
    Raises:
      NotInitializedError: (a ValueError, as upstream) telling the user how to initialize.
    """
    if not is_initialized():
        raise NotInitializedError(f"{api_name}: the NPU system is not initialized; {INIT_HINT}.")


def initialize(init_options, source, is_global=False):
    """Initializes the system unless it already is.

    Args:
      init_options: dict of normalized init-stage option values to make process-wide.
      source: "resource_init", "NPUInit" or "graph".
      is_global: True for ``npu_resource_init`` (later NPUInit/NPUShutdown ops do nothing).
    Returns:
      True if this call initialized the system, False if it was already initialized.
    """
    token = register_init_options(init_options).encode("utf-8")
    return bool(native_library.c_api().npu_bridge_system_initialize(token, source.encode("utf-8"), int(is_global)))


def shutdown(force=False):
    """Finalizes the system.

    Args:
      force: also finalize a global (``npu_resource_init``) initialization.
    Returns:
      True if the system was initialized and is now shut down.
    """
    return bool(native_library.c_api().npu_bridge_system_shutdown(int(force)))
