"""Reading the project's markdown pages in tests: headings and the anchors GitHub gives them."""

import re

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)


def without_fences(text):
    """Markdown text with fenced code blocks blanked out (a '#' line there is no heading)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def github_anchor(heading):
    """The anchor GitHub gives a heading: its text lowercased, punctuation except '-' and '_' dropped, spaces -> '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays, its target goes
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    """Every heading anchor of a markdown page (repeated headings get -1, -2, ... as on GitHub)."""
    seen = {}
    result = set()
    for match in _HEADING.finditer(without_fences(path.read_text(encoding="utf-8"))):
        anchor = github_anchor(match.group(2))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        result.add(anchor if count == 0 else f"{anchor}-{count}")
    return result
