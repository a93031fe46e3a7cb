"""Generated blocks in the documentation: text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` lines.

Tables that restate a single source of truth (the option table, the names not supported off the NPU, the
mixed-precision lists) are generated into a page under ``docs/`` through this module, and tests compare each
page's block with its generator.
"""

import pathlib

from npu_bridge.core.runtime.errors import NpuArgumentError

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
DOCS_DIR = REPO_ROOT / "docs"


def doc_page(name):
    """Returns the path of the page ``name`` (e.g. "options.md") in the repository's ``docs/`` directory."""
    return DOCS_DIR / name


def _markers(name):
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def _span(text, name, path):
    start_marker, end_marker = _markers(name)
    start, end = text.find(start_marker), text.find(end_marker)
    if start < 0 or end < start:
        raise NpuArgumentError(f"{path} needs the lines {start_marker} and {end_marker}, in that order")
    return start + len(start_marker), end


def read_block(name, path):
    """Returns the text of block ``name`` of the page ``path``, without surrounding blank lines.

    Args:
      name: the block name of its markers, e.g. "options-table".
      path: the markdown page that holds the block.
    Raises:
      ValueError: the page lacks the block's markers.
    """
    text = pathlib.Path(path).read_text(encoding="utf-8")
    start, end = _span(text, name, path)
    return text[start:end].strip("\n")


def write_block(name, content, path):
    """Replaces the text of block ``name`` of the page ``path`` with ``content``.

    Args:
      name: the block name of its markers, e.g. "options-table".
      content: the new text of the block.
      path: the markdown page that holds the block.
    Raises:
      ValueError: the page lacks the block's markers.
    """
    path = pathlib.Path(path)
    text = path.read_text(encoding="utf-8")
    start, end = _span(text, name, path)
    path.write_text(f"{text[:start]}\n{content.strip(chr(10))}\n{text[end:]}", encoding="utf-8")
