"""Text from files, made inert before a tool shows it: on a terminal, in a CSV, in HTML.

A name read from a file (an op name, a file name, a value of a JSON or CSV file) may hold control characters
that a terminal obeys: ESC sequences that move the cursor, erase lines or set the window title, a carriage
return or a newline that forges a line, a bidi override that shows text reversed. Every such character is
shown as a visible escape instead, as Python writes it: ``\\n``, ``\\x1b``, ``\\x9b``, ``\\u202e``. Escaped are the
C0 controls (newline and tab included), DEL, the C1 controls, the bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E,
U+2066-U+2069), the line and paragraph separators (U+2028, U+2029) and lone surrogates (bytes of a file name
that are not UTF-8). Backslashes are left as they are, so escaping twice changes nothing.

  value(v)       one value from a file, for a line of terminal text: every control escaped
  lines(text)    a text the tool composed: its own newlines and tabs kept, every other control escaped
  csv_cell(v)    a CSV cell: strings with controls escaped; numbers unchanged
  csv_name(v)    a CSV cell holding a name: ``csv_cell``, and a leading ``=``, ``+``, ``-`` or ``@`` (a formula to a
                 spreadsheet) prefixed with ``'``
  html_text(v)   HTML text or a quoted attribute value: controls escaped, then ``&<>"'`` escaped
  echo(text)     prints ``lines(text)``: what the command-line tools print goes through it
"""

import html
import re
import sys

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_ANY_CONTROL = re.compile(f"[\t\n{_CONTROLS}]")
_CONTROL_BUT_LAYOUT = re.compile(f"[{_CONTROLS}]")
_FORMULA_STARTS = ("=", "+", "-", "@")


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match):
    char = match.group()
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def value(v):
    """Returns ``str(v)`` with every control character (newline and tab too) as a visible escape."""
    return _ANY_CONTROL.sub(_escape, str(v))


def lines(text):
    """Returns ``text`` with every control character but newline and tab as a visible escape."""
    return _CONTROL_BUT_LAYOUT.sub(_escape, str(text))


def csv_cell(v):
    """Returns a CSV cell: a string with every control character escaped, anything else as it is."""
    return value(v) if isinstance(v, str) else v


def csv_name(v):
    """Returns a CSV cell holding a name: ``csv_cell``, with ``'`` before a leading ``=``, ``+``, ``-`` or ``@``."""
    cell = csv_cell(v)
    return f"'{cell}" if isinstance(cell, str) and cell.startswith(_FORMULA_STARTS) else cell


def csv_row(cells):
    """Returns the row with ``csv_cell`` applied to every cell."""
    return [csv_cell(cell) for cell in cells]


def html_text(v):
    """Returns ``v`` as HTML text or a quoted attribute value: controls escaped, then ``&<>"'``."""
    return html.escape(value(v), quote=True)


def echo(text, file=None, flush=False):
    """Prints ``lines(text)`` to ``file`` (default: standard output)."""
    print(lines(text), file=sys.stdout if file is None else file, flush=flush)
