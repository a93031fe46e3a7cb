"""npu_bridge's error classes, for ``except`` clauses: ``from npu_bridge.errors import NpuBridgeError``.

Every error npu_bridge raises is an ``NpuBridgeError`` and also the builtin upstream raises in the same situation
(``NpuArgumentError`` is a ``ValueError``, ``CollectiveError`` a ``RuntimeError``, ...). The classes are defined in
``npu_bridge.core.runtime.errors``; this module is their public home. It imports no TensorFlow.
"""

from npu_bridge.core.runtime.errors import (
    CollectiveError,
    DeviceIdError,
    DumpFormatError,
    DumpTreeError,
    EnvironmentVariableError,
    FileReadError,
    JobAuthenticationError,
    KerasVersionError,
    LaunchError,
    NativeLibraryError,
    NotAvailableError,
    NotInitializedError,
    NotProvidedError,
    NotSupportedOffNpuError,
    NpuArgumentError,
    NpuArgumentTypeError,
    NpuBridgeError,
    NpuOptionError,
    NpuUsageError,
    OptionValueError,
    OutfeedError,
    OutputFileError,
    PassContractError,
    ProfileDataError,
    RankTableError,
    UnsafePathError,
)

__all__ = [
    "CollectiveError",
    "DeviceIdError",
    "DumpFormatError",
    "DumpTreeError",
    "EnvironmentVariableError",
    "FileReadError",
    "JobAuthenticationError",
    "KerasVersionError",
    "LaunchError",
    "NativeLibraryError",
    "NotAvailableError",
    "NotInitializedError",
    "NotProvidedError",
    "NotSupportedOffNpuError",
    "NpuArgumentError",
    "NpuArgumentTypeError",
    "NpuBridgeError",
    "NpuOptionError",
    "NpuUsageError",
    "OptionValueError",
    "OutfeedError",
    "OutputFileError",
    "PassContractError",
    "ProfileDataError",
    "RankTableError",
    "UnsafePathError",
]
