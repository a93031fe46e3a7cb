"""Generated blocks in README.md: text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` lines.

Tables that restate a single source of truth (the option table, the list of names not available yet) are
generated into the README through this module, and tests compare the README's block with the generator.
"""

import pathlib

from npu_bridge.core.runtime.errors import NpuArgumentError

DEFAULT_README = pathlib.Path(__file__).resolve().parents[3] / "README.md"


def _markers(name):
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def _span(text, name, path):
    start_marker, end_marker = _markers(name)
    start, end = text.find(start_marker), text.find(end_marker)
    if start < 0 or end < start:
        raise NpuArgumentError(f"{path} needs the lines {start_marker} and {end_marker}, in that order")
    return start + len(start_marker), end


def read_block(name, path=DEFAULT_README):
    """Returns the text of block ``name`` without surrounding blank lines.

    Raises:
      ValueError: the README lacks the block's markers.
    """
    text = pathlib.Path(path).read_text(encoding="utf-8")
    start, end = _span(text, name, path)
    return text[start:end].strip("\n")


def write_block(name, content, path=DEFAULT_README):
    """Replaces the text of block ``name`` with ``content``.

    Raises:
      ValueError: the README lacks the block's markers.
    """
    path = pathlib.Path(path)
    text = path.read_text(encoding="utf-8")
    start, end = _span(text, name, path)
    path.write_text(f"{text[:start]}\n{content.strip(chr(10))}\n{text[end:]}", encoding="utf-8")
