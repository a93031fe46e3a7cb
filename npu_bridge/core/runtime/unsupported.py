"""Upstream names that cannot work here: APIs that need NPU hardware or software with no counterpart off the NPU.

Such a name still imports (so scripts import cleanly), but using it raises ``NotSupportedOffNpuError`` saying
why and what to use instead. ``python -m npu_bridge.core.runtime.unsupported [--write-docs]`` prints the list
docs/fidelity.md shows (or writes it into that page's ``unsupported-table`` block); a test keeps them in sync.
"""

import sys

from npu_bridge.core.runtime import doc_blocks
from npu_bridge.core.runtime.errors import NotSupportedOffNpuError

DOCS_BLOCK = "unsupported-table"  # block name in DOCS_PAGE, see npu_bridge/core/runtime/doc_blocks.py
DOCS_PAGE = doc_blocks.doc_page("fidelity.md")

_registry = {}  # qualified name -> why it cannot work off the NPU


def unsupported(qualname, reason, register=True):
    """Returns a stand-in for an upstream function or class that cannot work off the NPU.

    Args:
      qualname: the upstream name, e.g. "npu_bridge.estimator.npu_ops.npu_onnx_graph_op".
      reason: why, and what to use instead when there is something.
      register: list it in ``registry()`` (and so in docs/fidelity.md); False for names made on demand.
    Returns:
      A callable that raises ``NotSupportedOffNpuError`` naming ``qualname`` and the reason.
    """
    if register:
        _registry[qualname] = reason
    short = qualname.rsplit(".", 1)[-1]

    def not_supported(*args, **kwargs):
        raise NotSupportedOffNpuError(f"{qualname} is not supported off the NPU: {reason}")

    not_supported.__name__ = short
    not_supported.__qualname__ = short
    not_supported.__doc__ = f"Not supported off the NPU: {reason}"
    not_supported._npu_bridge_unsupported = reason
    return not_supported


def module_getattr(module, reason, values=None):
    """Returns a module-level ``__getattr__`` for an upstream module none of whose functions work off the NPU.

    The module's name is listed in ``registry()`` as ``<module>.*``. A facade assigns the result to its
    ``__getattr__``, so any name a script looks up in it imports and raises when used.

    Args:
      module: the upstream module path, e.g. "npu_bridge.npu_cpu.lru_cache".
      reason: why its names cannot work here.
      values: {name: value} of the module's plain values that do work (constants); they are returned as is.
    Returns:
      A function of one name: the value from ``values``, else a stand-in from ``unsupported``; it raises
      ``AttributeError`` for dunder names, so introspection sees an ordinary module.
    """
    unsupported(f"{module}.*", reason)
    values = dict(values or {})

    def __getattr__(name):  # noqa: N807  (the module-level __getattr__ of PEP 562)
        if name in values:
            return values[name]
        if name.startswith("__"):
            raise AttributeError(name)
        return unsupported(f"{module}.{name}", reason, register=False)

    return __getattr__


def registry():
    """Returns {qualified name: reason} of every "not supported off the NPU" stand-in created so far."""
    return dict(_registry)


def render_markdown():
    """Imports every upstream module path and renders the "not supported off the NPU" list as markdown."""
    from npu_bridge.core.runtime import api_surface

    api_surface.import_all()
    return "".join(f"- `{name}`: {reason}\n" for name, reason in sorted(_registry.items()))


if __name__ == "__main__":
    # Run as a script this file is `__main__`, whose registry the facades never fill: use the real module.
    from npu_bridge.core.runtime.unsupported import render_markdown as real_render_markdown

    if sys.argv[1:] == ["--write-docs"]:
        doc_blocks.write_block(DOCS_BLOCK, real_render_markdown(), DOCS_PAGE)
    else:
        sys.stdout.write(real_render_markdown())
