"""Upstream names whose capability this version does not provide yet.

Such a name still imports (so scripts import cleanly), but using it raises ``NotAvailableError`` saying what
is missing. ``python -m npu_bridge.pending [--write-readme]`` prints the list the README shows (or writes it
into the README's ``pending-table`` block); a test keeps them in sync.
"""

import sys

from npu_bridge import readme_blocks
from npu_bridge.errors import NotAvailableError

README_BLOCK = "pending-table"
CAPABILITIES = {
    "collectives": "cross-process HCCL collectives and distributed training",
    "dump": "data dump, overflow detection and exception dump",
    "profiling": "profiling",
    "compute": "NPU compute ops, precision control and loss scaling",
    "estimator": "the NPUEstimator runtime and the rest of the TF1 surface",
}

_registry = {}  # qualified name -> capability key


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


def registry():
    """Returns {qualified name: capability key} of every stand-in created so far."""
    return dict(_registry)


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
    else:
        sys.stdout.write(_module.render_markdown())
