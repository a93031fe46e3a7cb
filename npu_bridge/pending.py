"""Upstream names that do not work here: not available yet, or not supported off the NPU at all.

Such a name still imports (so scripts import cleanly), but using it raises an error saying why:
``NotAvailableError`` for a capability this version does not provide yet (``pending``), or
``NotSupportedOffNpuError`` for an API that needs NPU hardware or software with no counterpart here
(``unsupported``). ``python -m npu_bridge.pending [--write-readme]`` prints both lists the README shows (or
writes them into its ``pending-table`` and ``unsupported-table`` blocks); a test keeps them in sync.
"""

import sys

from npu_bridge import readme_blocks
from npu_bridge.errors import NotAvailableError, NotSupportedOffNpuError

README_BLOCK = "pending-table"
UNSUPPORTED_README_BLOCK = "unsupported-table"
CAPABILITIES = {
    "collectives": "cross-process HCCL collectives and distributed training",
    "dump": "data dump, overflow detection and exception dump",
    "profiling": "profiling",
    "estimator": "the NPUEstimator runtime and the rest of the TF1 surface",
}

_registry = {}  # qualified name -> capability key
_unsupported = {}  # qualified name -> why it cannot work off the NPU


def pending(qualname, capability, register=True):
    """Returns a stand-in for an upstream function or class that is not available yet.

    Args:
      qualname: the upstream name, e.g. "npu_bridge.estimator.npu_ops.dropout".
      capability: a key of CAPABILITIES.
      register: list it in ``registry()`` (and so in the README); False for names made on demand.
    Returns:
      A callable that raises ``NotAvailableError`` naming ``qualname`` and the missing capability.
    """
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}; one of {sorted(CAPABILITIES)}")
    if register:
        _registry[qualname] = capability
    short = qualname.rsplit(".", 1)[-1]

    def unavailable(*args, **kwargs):
        raise NotAvailableError(
            f"{qualname} is not available yet in this version of npu_bridge ({CAPABILITIES[capability]} is "
            "not implemented yet); the README lists what is not available yet")

    unavailable.__name__ = short
    unavailable.__qualname__ = short
    unavailable.__doc__ = f"Not available yet: {CAPABILITIES[capability]}."
    unavailable._npu_bridge_pending = capability  # pylint: disable=protected-access
    return unavailable


def unsupported(qualname, reason, register=True):
    """Returns a stand-in for an upstream function or class that cannot work off the NPU.

    Args:
      qualname: the upstream name, e.g. "npu_bridge.estimator.npu_ops.npu_onnx_graph_op".
      reason: why, and what to use instead when there is something.
      register: list it in ``unsupported_registry()`` (and so in the README); False for names made on demand.
    Returns:
      A callable that raises ``NotSupportedOffNpuError`` naming ``qualname`` and the reason.
    """
    if register:
        _unsupported[qualname] = reason
    short = qualname.rsplit(".", 1)[-1]

    def not_supported(*args, **kwargs):
        raise NotSupportedOffNpuError(f"{qualname} is not supported off the NPU: {reason}")

    not_supported.__name__ = short
    not_supported.__qualname__ = short
    not_supported.__doc__ = f"Not supported off the NPU: {reason}"
    not_supported._npu_bridge_unsupported = reason  # pylint: disable=protected-access
    return not_supported


def registry():
    """Returns {qualified name: capability key} of every "not available yet" stand-in created so far."""
    return dict(_registry)


def unsupported_registry():
    """Returns {qualified name: reason} of every "not supported off the NPU" stand-in created so far."""
    return dict(_unsupported)


def render_unsupported_markdown():
    """Imports every upstream module path and renders the "not supported off the NPU" list as markdown."""
    from npu_bridge import api_surface  # pylint: disable=import-outside-toplevel

    api_surface.import_all()
    if not _unsupported:
        return "Every upstream API listed above works off the NPU or is on its way.\n"
    return "".join(f"- `{name}`: {reason}\n" for name, reason in sorted(_unsupported.items()))


def render_markdown():
    """Imports every upstream module path and renders the "not available yet" list as markdown."""
    from npu_bridge import api_surface  # pylint: disable=import-outside-toplevel

    api_surface.import_all()
    by_capability = {}
    for name, capability in sorted(_registry.items()):
        by_capability.setdefault(capability, []).append(name)
    if not by_capability:
        return "Everything in the upstream API listed above is available.\n"
    lines = []
    for capability, names in by_capability.items():
        lines.append(f"- **{CAPABILITIES[capability]}**: " + ", ".join(f"`{n}`" for n in names))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    # Run as a script this file is `__main__`, whose registry the facades never fill: use the real module.
    from npu_bridge import pending as _module  # pylint: disable=import-self

    if sys.argv[1:] == ["--write-readme"]:
        readme_blocks.write_block(README_BLOCK, _module.render_markdown())
        readme_blocks.write_block(UNSUPPORTED_README_BLOCK, _module.render_unsupported_markdown())
    else:
        sys.stdout.write(_module.render_markdown())
        sys.stdout.write("\nNot supported off the NPU:\n" + _module.render_unsupported_markdown())
