"""Renders the option table (markdown for docs/options.md, kept in sync; plain text for a terminal)."""

import collections
import os
from typing import Union

from npu_bridge.core.options.spec import STATUS_TEXT, STATUSES
from npu_bridge.core.options.table import OPTIONS
from npu_bridge.core.runtime import doc_blocks

BLOCK = "options-table"  # block name in DOCS_PAGE, see npu_bridge/core/runtime/doc_blocks.py
DOCS_PAGE = doc_blocks.doc_page("options.md")

_HEADER = ("key", "kind", "stage", "default", "allowed", "status", "effect here")


def render_markdown() -> str:
    """Returns the option table as markdown: a note, one row per option, then one count line per status.

    Returns:
      The markdown text (no trailing newline).
    """
    lines = [
        "Generated from `npu_bridge/core/options/table.py` by `python -m npu_bridge.core.options --write-docs`; "
        "do not edit by hand. kind = the AttrValue field upstream reads (b bool, i int, s string); "
        "a bad value raises `NpuOptionError` when the session is created.",
        "",
        _row(_HEADER),
        _row(["---"] * len(_HEADER)),
    ]
    for spec in OPTIONS.values():
        lines.append(
            _row(
                [
                    f"`{spec.name}`",
                    spec.kind,
                    spec.stage,
                    _default_text(spec.default),
                    _allowed_text(spec),
                    STATUS_TEXT[spec.status],
                    spec.effect,
                ]
            )
        )
    counts = collections.Counter(spec.status for spec in OPTIONS.values())
    lines.append("")
    lines.extend(
        f"- {STATUS_TEXT[status]}: {counts[status]} option{'' if counts[status] == 1 else 's'}" for status in STATUSES
    )
    return "\n".join(lines)


_TERMINAL_HEADER = ("key", "kind", "stage", "default", "status here")
_TERMINAL_CELL = 28  # characters; longer defaults are cut (``npu-bridge options KEY`` shows everything)


def render_terminal() -> str:
    """Returns the option table as aligned plain-text columns: key, kind, stage, default, status.

    Returns:
      The text (no trailing newline); the allowed values and effects are left to ``npu-bridge options KEY``.
    """
    rows = [_TERMINAL_HEADER]
    for spec in OPTIONS.values():
        default = _default_text(spec.default).replace("`", "")
        if len(default) > _TERMINAL_CELL:
            default = default[: _TERMINAL_CELL - 3] + "..."
        rows.append((spec.name, spec.kind, spec.stage, default, STATUS_TEXT[spec.status]))
    widths = [max(len(row[i]) for row in rows) for i in range(len(_TERMINAL_HEADER))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    lines.append("")
    lines.append(
        "npu-bridge options KEY shows one option's allowed values and effect; --markdown prints the full table."
    )
    return "\n".join(lines)


def write_docs(path: Union[str, os.PathLike] = DOCS_PAGE) -> None:
    """Replaces the option-table block of a documentation page with ``render_markdown()``.

    Args:
      path: the page to rewrite; default the repository's docs/options.md.
    Raises:
      ValueError: the page lacks the block's markers.
    """
    doc_blocks.write_block(BLOCK, render_markdown(), path)


def _allowed_text(spec):
    text = spec.allowed
    if spec.strict_kind and spec.bool_texts:
        text += f" (string field; a bool True / False, as older releases took it, means {' / '.join(spec.bool_texts)})"
    elif spec.strict_kind:
        text += " (string field only)"
    if spec.checked_when:
        text += "; checked only when " + " or ".join(spec.checked_when) + " is set"
    return text


def _default_text(value):
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    return f"`{value}`"


def _row(cells):
    return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"
