"""``npu_device.global_options()``: the process's options tree, with the adapter's assignment rules.

Each container (the top ``NpuConfig``, ``dump_config``, ``profiling_config``, ...) has a fixed set of attributes:
assigning an unknown one raises ``ValueError`` listing the known ones. A field with a list of allowed values
raises at assignment when the value is not in it (compared with ``==``, so ``1`` passes for ``True``):
``TypeError`` when the field has a default of another type, else ``ValueError``. Other values are checked by the
option table when the device opens (``npu_bridge.core.tf2.device``), which reads the tree once: later
assignments have no effect, and say so.
"""

import threading

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf2 import option_fields

_CONTAINER_CLASSES = {
    "": "NpuConfig",
    "dump_config": "NpuDumpConfig",
    "aoe_config": "NpuAoeConfig",
    "profiling_config": "NpuProfilingConfig",
    "memory_config": "MemoryConfig",
    "experimental": "NpuExperimentalConfig",
    "experimental.multi_branches_config": "NpuMultiBranchesConfig",
    "experimental.logical_device_deploy_config": "LogicalDeviceDeployConfig",
    "experimental.model_deploy_config": "ModelDeployConfig",
    "experimental.graph_memory_optimize_config": "GraphMemoryOptimizeConfig",
}


class OptionGroup:
    """One container of the options tree; attributes are its fields and sub-containers."""

    def __init__(self, prefix, read_only_after):
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_label", _CONTAINER_CLASSES[prefix])
        object.__setattr__(self, "_frozen", read_only_after)
        values, children = {}, {}
        for field in option_fields.FIELDS:
            parent, _, leaf = field.path.rpartition(".")
            if parent == prefix:
                values[leaf] = field.default
            elif parent.startswith(prefix + "." if prefix else ""):
                child = parent[len(prefix) + 1 :] if prefix else parent
                name = child.partition(".")[0]
                if name not in children:
                    children[name] = OptionGroup(f"{prefix}.{name}" if prefix else name, read_only_after)
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_children", children)
        object.__setattr__(self, "_assigned", set())

    def __getattr__(self, name):
        values, children = object.__getattribute__(self, "_values"), object.__getattribute__(self, "_children")
        if name in values:
            return values[name]
        if name in children:
            return children[name]
        raise AttributeError(f"'{self._label}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        path = f"{self._prefix}.{name}" if self._prefix else name
        if name not in self._values:
            raise NpuArgumentError(
                f"'{self._label}' has no option '{name}'"
                + (" that can be assigned (it is a group of options)" if name in self._children else "")
                + f"; its options are: {', '.join(sorted([*self._values, *self._children]))}"
            )
        field = option_fields.BY_PATH[path]
        _check_allowed(field, value)
        if field.legacy:
            log.warn_once(
                ("npu_device-legacy", path),
                "npu_device: global_options().%s was removed from the adapter in its r1.11 release and has no "
                "effect; it is accepted so that older scripts run",
                path,
            )
        if field.deprecated is not None:
            replacement = f"; use {field.deprecated} instead" if field.deprecated else ""
            log.warn_once(
                ("npu_device-deprecated", path), "npu_device: global_options().%s is deprecated%s", path, replacement
            )
        if self._frozen.is_set():
            log.warn_once(
                ("npu_device-late", path),
                "npu_device: global_options().%s = %r after npu_device.open() has no effect: the device read the "
                "options when it opened (as on Ascend). Set options before open()",
                path,
                value,
            )
        self._values[name] = value
        self._assigned.add(name)

    def __dir__(self):
        return sorted([*self._values, *self._children])

    def __repr__(self):
        return f"{self._label}({', '.join(f'{k}={v!r}' for k, v in sorted(self.leaves().items()))})"

    def leaves(self):
        """Returns {path: value} of every field under this container, unset ones included."""
        result = {f"{self._prefix}.{k}" if self._prefix else k: v for k, v in self._values.items()}
        for child in self._children.values():
            result.update(child.leaves())
        return result

    def assigned(self):
        """Returns {path: value} of the fields a script assigned under this container (None values left out)."""
        result = {
            f"{self._prefix}.{k}" if self._prefix else k: self._values[k]
            for k in self._assigned
            if self._values[k] is not None
        }
        for child in self._children.values():
            result.update(child.assigned())
        return result

    def as_dict(self):
        """Returns the set fields as the adapter hands them on: {leaf name: string}, True/False as "1"/"0"."""
        result = {}
        for path, value in self.leaves().items():
            if value is not None:
                result[path.rpartition(".")[2]] = ("1" if value else "0") if isinstance(value, bool) else str(value)
        return result


def _check_allowed(field, value):
    if field.allowed is None or value in field.allowed:
        return
    if field.default is not None and type(value) is not type(field.default):
        raise NpuArgumentTypeError(
            f"global_options().{field.path}: expected {type(field.default).__name__}, got "
            f"{type(value).__name__} {value!r}; allowed: {list(field.allowed)}"
        )
    raise NpuArgumentError(f"global_options().{field.path}: {value!r} not in optional list {list(field.allowed)}")


_lock = threading.Lock()
_opened = threading.Event()  # set once a device read the options
_root = None


def global_options():
    """Returns the process's options tree (created at the first call).

    Returns:
      The ``NpuConfig`` container; assign its fields before ``npu_device.open()``.
    """
    global _root
    with _lock:
        if _root is None:
            _root = OptionGroup("", _opened)
        return _root


def snapshot():
    """Marks the options as read by an opened device.

    Returns:
      {path: value} of the fields the script assigned.
    """
    _opened.set()
    return global_options().assigned()
