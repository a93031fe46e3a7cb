"""Exception types raised by npu_bridge.

Every error names the input, the bad value and what would be accepted. Error classes derive from the
builtin type upstream raises in the same situation (mostly ``ValueError``), so scripts that catch
upstream's exceptions keep working.
"""


class NpuBridgeError(Exception):
    """Base class of all npu_bridge errors."""


class NpuOptionError(NpuBridgeError, ValueError):
    """A ``NpuOptimizer`` parameter_map option (or a config-class argument) has a bad value."""

    def __init__(self, key, value, allowed, detail=None):
        self.key = key
        self.value = value
        self.allowed = allowed
        message = f"NpuOptimizer option '{key}' has invalid value {value!r}"
        if detail:
            message += f": {detail}"
        if allowed:
            message += f". Allowed: {allowed}"
        super().__init__(message)


class RankTableError(NpuBridgeError, ValueError):
    """The rank table file (RANK_TABLE_FILE) or the rank environment variables are malformed."""


class DeviceIdError(NpuBridgeError, ValueError):
    """ASCEND_DEVICE_ID / DEVICE_ID / session_device_id is not a valid device id."""


class NotInitializedError(NpuBridgeError, ValueError):
    """An HCCL query or collective was used before the system was initialized."""


class NativeLibraryError(NpuBridgeError, ImportError):
    """The npu_bridge C++ library is missing, stale or failed to load."""


class NotAvailableError(NpuBridgeError, NotImplementedError):
    """An upstream API that this version of npu_bridge does not provide (yet)."""


class CollectiveError(NpuBridgeError, RuntimeError):
    """A collective failed or timed out, a peer rank is gone, or the ranks could not form the world.

    Deliberately not a ``tf.errors.OpError``: ``MonitoredSession`` retries Aborted/Unavailable errors by
    recreating the session, which cannot help once TensorFlow has stopped the process's collectives.
    """


class NotSupportedOffNpuError(NpuBridgeError, NotImplementedError):
    """An upstream API that needs NPU hardware or software with no counterpart off the NPU; it will not work here."""


class ProfileDataError(NpuBridgeError, ValueError):
    """A profiling directory or one of its files is missing or malformed."""
