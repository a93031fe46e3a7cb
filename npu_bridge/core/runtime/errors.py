"""Exception types raised by npu_bridge.

Every error names the input, the bad value and what would be accepted. Error classes derive from the
builtin type upstream raises in the same situation (mostly ``ValueError``), so scripts that catch
upstream's exceptions keep working. Every error class of npu_bridge is defined here (tests/runtime/test_errors.py
checks it); this module imports nothing, so the launcher can use it without TensorFlow.
"""


class NpuBridgeError(Exception):
    """Base class of all npu_bridge errors."""


def shortened(value, limit=200):
    """``repr(value)``, cut to about ``limit`` characters (a pasted file must not become a 400 KB message)."""
    return shortened_text(repr(value), limit)


def shortened_text(text, limit=200):
    """``text`` (a path, a line of a file) cut to about ``limit`` characters, for a message that quotes it."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


DETAIL_LIMIT = 500  # characters of the detail part of an option error (it may quote a file or a path)


class NpuOptionError(NpuBridgeError, ValueError):
    """A ``NpuOptimizer`` parameter_map option (or a config-class argument) has a bad value."""

    def __init__(self, key, value, allowed, detail=None):
        self.key = key
        self.value = value
        self.allowed = allowed
        message = f"NpuOptimizer option '{key}' has invalid value {shortened(value)}"
        if detail:
            message += f": {shortened_text(detail, DETAIL_LIMIT)}"
        if allowed:
            message += f". Allowed: {allowed}"
        super().__init__(message)


class OptionValueError(NpuBridgeError, ValueError):
    """An option value, or the content of a file an option names, failed one check.

    The message only says what is wrong; the option parser re-raises it as ``NpuOptionError`` naming the
    option and its value.
    """


class PassContractError(NpuBridgeError, ValueError):
    """A value does not fit the pass-parameter contract between Python and the C++ passes: a session plan value
    of the wrong type or range, or a parameter_map key holding another kind than the contract declares."""


class NpuArgumentError(NpuBridgeError, ValueError):
    """An argument of a public function or class has a bad value (upstream raises ``ValueError``)."""


class NpuArgumentTypeError(NpuBridgeError, TypeError):
    """An argument of a public function or class has the wrong type or dtype (upstream raises ``TypeError``)."""


class NpuKeyError(NpuBridgeError, KeyError):
    """A name that must exist does not, where upstream raises ``KeyError`` (``HParams.set_hparam`` of an unknown
    hyperparameter)."""

    def __str__(self):  # KeyError quotes its message; this one is a sentence
        return str(self.args[0]) if self.args else ""


class NpuUsageError(NpuBridgeError, RuntimeError):
    """An API was used where it cannot work: a graph-only op in eager mode, a Profiler stopped before it
    started or started twice, a host_call fn that does not take its tensors, an NpuOptimizer session without
    the C++ library."""


class EnvironmentVariableError(NpuBridgeError, ValueError):
    """An environment variable (HCCL_*_TIMEOUT, HCCL_IF_BASE_PORT, ASCEND_GLOBAL_LOG_LEVEL, JOB_ID,
    TF_USE_LEGACY_KERAS) is missing or has a bad value."""


class RankTableError(NpuBridgeError, ValueError):
    """The rank table file (RANK_TABLE_FILE) or the rank environment variables are malformed."""


class DeviceIdError(NpuBridgeError, ValueError):
    """ASCEND_DEVICE_ID / DEVICE_ID / session_device_id is not a valid device id."""


class NotInitializedError(NpuBridgeError, ValueError):
    """An HCCL query or collective was used before the system was initialized."""


class KerasVersionError(NpuBridgeError, ImportError):
    """npu_bridge was imported after TensorFlow had already given Keras 3 for ``tf.keras`` (or another of its Keras
    names), so TF1 code cannot get legacy Keras (tf_keras) without mixing the two."""


class NativeLibraryError(NpuBridgeError, ImportError):
    """The npu_bridge C++ library is missing, stale or failed to load."""


class NotAvailableError(NpuBridgeError, NotImplementedError):
    """An upstream API that this version of npu_bridge does not provide (yet)."""


class NotProvidedError(NotAvailableError, AttributeError):
    """A name that npu_bridge's ``tf.estimator`` (for TensorFlow without an Estimator of its own) does not provide:
    the canned estimators (``DNNClassifier``, ...), heads, ``pandas_input_fn``, ... Raised when the name is looked up,
    so it is an ``AttributeError`` too: ``hasattr`` and ``getattr(module, name, default)`` keep working."""


class CollectiveError(NpuBridgeError, RuntimeError):
    """A collective failed or timed out, a peer rank is gone, or the ranks could not form the world.

    Deliberately not a ``tf.errors.OpError``: ``MonitoredSession`` retries Aborted/Unavailable errors by
    recreating the session, which cannot help once TensorFlow has stopped the process's collectives.
    """


class NotSupportedOffNpuError(NpuBridgeError, NotImplementedError):
    """An upstream API that needs NPU hardware or software with no counterpart off the NPU; it will not work here."""


class ProfileDataError(NpuBridgeError, ValueError):
    """A profiling directory or one of its files is missing or malformed."""


class OutfeedError(NpuBridgeError, RuntimeError):
    """The host side of an outfeed channel (``host_call``, the outfeed session hooks) failed or did not finish."""


class DumpFormatError(NpuBridgeError, ValueError):
    """A file is not a dump artifact, or is damaged."""


class DumpTreeError(NpuBridgeError, FileNotFoundError):
    """A dump directory does not exist or holds no artifacts."""


class RerunError(NpuBridgeError, ValueError):
    """A dumped op cannot be rerun on its own (``npu-dump compare --isolate``): its recorded NodeDef or the ground
    truth's inputs are missing or damaged, or it is not a pure numeric computation."""


class BisectError(NpuBridgeError, ValueError):
    """``npu-debug bisect`` cannot search: no command, a command that fails or never prints the metric, a bad
    tolerance or output directory; the message names the input and what would be accepted."""


class LaunchError(NpuBridgeError):
    """Bad launcher arguments or rank table; the message says what to change."""


class RendezvousError(LaunchError):
    """The members of a job (launchers, or ranks a scheduler started one by one) did not meet at its chief: the
    chief cannot listen, refused a member, or the job was not complete in time; the message names who came."""


class FileReadError(NpuBridgeError, OSError):
    """A file the user named cannot be read: missing, not a regular file (a FIFO, a device), too large, or not
    UTF-8 text. ``strerror`` says which, so callers that report ``OSError.strerror`` need no change."""


class OutputFileError(NpuBridgeError, OSError):
    """A file the user named for output (``-o``) cannot be written: it is a FIFO, a device or a directory, its
    directory is missing, or the write failed (a full disk). The message names the file."""

    def __str__(self):
        return self.strerror or super().__str__()


class UnsafePathError(NpuBridgeError, OSError):
    """A path would take a write or a read outside where the user pointed: a directory of an artifact tree that
    is a symlink or belongs to another user, or a path in an index file (``info.json``, ``mapping.csv``) that is
    absolute or climbs out with ``..``. The message names the path and, for an index, the file."""

    def __str__(self):
        return self.strerror or super().__str__()


class JobAuthenticationError(NpuBridgeError, ConnectionError):
    """A connection between the relays of a job's machines did not prove the job's secret (or broke during the
    handshake); the connection is closed."""
