"""The process-wide value store upstream keeps in ``util`` (``global_dict_init/set_value/get_value``).

``init_resource`` caches the rank ids and sizes here; ``get_npu_rank_id()`` and siblings read them back.
"""

import threading

from npu_bridge.core.runtime.errors import NotInitializedError

_lock = threading.Lock()
_values = None


def global_dict_init():
    """Creates (or empties) the store."""
    global _values
    with _lock:
        _values = {}


def set_value(key, value):
    """Stores ``value`` under ``key``, creating the store if needed."""
    global _values
    with _lock:
        if _values is None:
            _values = {}
        _values[key] = value


def get_value(key, def_value=None):
    """Returns the value stored under ``key``, or ``def_value``.

    Raises:
      NotInitializedError: nothing was ever stored (upstream fails with a NameError here).
    """
    with _lock:
        if _values is None:
            raise NotInitializedError(
                f"get_value({key!r}): the value store is empty; call init_resource() (or util.global_dict_init()) first"
            )
        return _values.get(key, def_value)
