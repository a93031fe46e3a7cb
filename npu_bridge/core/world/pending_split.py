"""Split settings made before the NPU system is initialized, held until the world exists.

Scripts call ``set_split_strategy_by_idx`` / ``set_split_strategy_by_size`` at start-up, before any session
initializes the NPU system. ``npu_bridge.core.world.split_strategy`` validates the list at once and, while the
system is not initialized, keeps it here. Gradients built before initialization follow it (``settings``), and
the group registry of the next initialization takes it over (``take``) when it is created, at the first use of
groups, split strategies or collectives after initialization. From then on the setting belongs to the group
and disappears with it, like a setting made after initialization.
"""

import threading

_lock = threading.Lock()
_settings = {}


def put(group, kind, values):
    """Records a validated split setting of ``group`` for the next initialization.

    Args:
      group: the group name (only the world group can exist at the start of an initialization).
      kind: "idx" or "size".
      values: the validated tuple of split values.
    """
    with _lock:
        _settings.setdefault(group, {})[kind] = values


def settings(group):
    """Returns the pending split settings of ``group``.

    Args:
      group: the group name.
    Returns:
      A dict with keys among "idx" and "size", each mapped to its tuple of values; {} when none is pending.
    """
    with _lock:
        return dict(_settings.get(group, {}))


def take():
    """Removes and returns every pending split setting.

    Returns:
      A dict mapping group names to dicts as ``settings`` returns them.
    """
    with _lock:
        taken = {group: dict(kinds) for group, kinds in _settings.items()}
        _settings.clear()
        return taken
