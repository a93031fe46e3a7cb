"""The developer docs name only paths that exist: every repository path in docs/layout.md and CONTRIBUTING.md
(in code spans, fenced blocks and tables; in layout.md's tree, relative to the folder a line describes), and
layout.md names every file of ops/runtime/ and of optimizers/ itself."""

import pathlib
import re

import pytest
from helpers.paths import REPO_ROOT

ROOT = pathlib.Path(REPO_ROOT)
# Extensions of the repository's own files; a token ending in one (with a name before it) is a path even without
# a "/". Artifact names the docs mention (report.html, dump_status.json, statistic.csv) have none of them.
EXTENSIONS = (".py", ".md", ".cc", ".h", ".toml", ".txt", ".tsv", ".cfg", ".sh", ".so")
# Bases a doc's relative paths may start from besides the root: CONTRIBUTING.md says `core/...` for
# npu_bridge/core/...
BASES = ("", "npu_bridge")
LAYOUT_COLUMN = 27  # layout.md's tree: the path column, then what it holds

_FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_PATH = re.compile(r"[\w.<>*-]*\w[\w.<>*-]*(?:/[\w.<>*-]+)*/?|(?:[\w.<>*-]+/)+")
_PUNCTUATION = "()[]{},;:\"'`"


def path_like(token):
    """The token as a repository path, or None: tokens with a "/" or a known extension, not options, URLs or
    dotted names (``tf.nn.relu``, ``npu_bridge.core.options``)."""
    token = token.strip(_PUNCTUATION).rstrip(".")
    if not token or token.startswith(("-", "/")) or "//" in token or not _PATH.fullmatch(token):
        return None
    if "/" in token:
        return token if re.search(r"[A-Za-z]", token) else None
    stem, dot, ext = token.rpartition(".")
    return token if dot and stem.strip(".") and f".{ext}" in EXTENSIONS else None


def _tokens(text):
    return [p for p in (path_like(t) for t in text.split()) if p]


def _code_spans(text):
    return [m.group(2) for m in _CODE_SPAN.finditer(text)]


def markdown_mentions(text):
    """[(path, context folders)] of a markdown page: the paths in its code spans, fenced blocks and table rows.

    A table row's context is the folders its first cell names (``core/runtime/`` for ``c_functions.py``).
    """
    mentions = [(p, ()) for block in _FENCE.findall(text) for p in _tokens(block[1])]
    prose = _FENCE.sub("", text)
    for line in prose.splitlines():
        if not line.startswith("|"):
            continue
        if re.fullmatch(r"[|\s:-]+", line):
            continue
        first = line.split("|")[1] if _CODE_SPAN.sub("", line).count("|") > 1 else line
        context = tuple(p for span in _code_spans(first) for p in _tokens(span))
        mentions += [(p, context) for p in _tokens(_CODE_SPAN.sub(" ", line))]
        mentions += [(p, context) for span in _code_spans(line) for p in _tokens(span)]
    outside_tables = "\n".join(line for line in prose.splitlines() if not line.startswith("|"))
    mentions += [(p, ()) for span in _code_spans(outside_tables) for p in _tokens(span)]
    return mentions


def layout_tree_mentions(text, column=LAYOUT_COLUMN):
    """[(path, context folders)] of a layout tree: each line's first column names paths from the root; the text
    after it names paths relative to the last of those (or from the root)."""
    mentions, context = [], ()
    for line in text.splitlines():
        cut = column if line[column - 1 : column] == " " else len(line)  # a line of paths only has no description
        if line[:1].strip():
            context = tuple(_tokens(line[:cut].replace(",", " ")))
            mentions += [(p, ()) for p in context]
        mentions += [(p, context) for p in _tokens(line[cut:])]
    return mentions


def doc_mentions(text, tree=False):
    """Every path a doc names; ``tree``: its fenced blocks are layout trees (docs/layout.md)."""
    if not tree:
        return markdown_mentions(text)
    trees = [block[1] for block in _FENCE.findall(text)]
    return [m for block in trees for m in layout_tree_mentions(block)] + markdown_mentions(_FENCE.sub("", text))


def _exists(path, root):
    pattern = re.sub(r"(?:<[^>]+>|\*)+", "*", path).rstrip("/")
    if "*" in pattern:
        return any(root.glob(pattern))
    return (root / pattern).exists()


def missing_paths(mentions, root=ROOT):
    """The mentioned paths that exist neither from the root (or a base) nor in or below their context folders."""
    missing = set()
    for path, context in mentions:
        if any(_exists(path, root / base) for base in BASES):
            continue
        folders = [root / base / c for c in context for base in BASES if (root / base / c).exists()]
        folders = [f if f.is_dir() else f.parent for f in folders]
        if any(_exists(path, f) or any(f.rglob(path.rstrip("/"))) for f in folders):
            continue
        missing.add(path)
    return sorted(missing)


@pytest.mark.parametrize("doc, tree", [("docs/layout.md", True), ("CONTRIBUTING.md", False)])
def test_every_path_the_developer_docs_name_exists(doc, tree):
    mentions = doc_mentions((ROOT / doc).read_text(encoding="utf-8"), tree=tree)
    assert len(mentions) > 30, mentions  # the extraction still finds the docs' paths
    assert not missing_paths(mentions), f"{doc} names paths that do not exist: {missing_paths(mentions)}"


def test_layout_names_every_cpp_file_of_ops_runtime_and_optimizers():
    text = (ROOT / "docs/layout.md").read_text(encoding="utf-8")
    files = [*(ROOT / "ops/runtime").glob("*.*"), *(ROOT / "optimizers").glob("*.*")]
    unnamed = sorted(p.name for p in files if not re.search(rf"(?<![\w/]){re.escape(p.stem)}\b", text))
    assert not unnamed, f"docs/layout.md does not name {unnamed}"


def test_path_like_tells_paths_from_other_code():
    for token in ("ops/runtime/", "core/session/steps/<capability>.py", "table.py", "`.ci/run`", "(npu_init.py,"):
        assert path_like(token), token
    for token in ("tf.nn.relu", "npu_bridge.core.options", "https://example.com/a.md", "--write-docs", ".cc", "/"):
        assert path_like(token) is None, token
    assert path_like("report.html") is None and path_like("a/b(c)") is None


def test_the_check_finds_a_wrong_path():
    markdown = (
        "Run `python3 -m pytest tests/repository/test_layout.py` and `tf.nn.relu`; see https://example.com/x/y.md.\n\n"
        "```bash\npython3 -m pip install -r requirements.txt\n```\n\n"
        "| Folder | Concern |\n| --- | --- |\n"
        "| `core/runtime/` | the C functions (`c_functions.py`, `no_such_module.py`) |\n"
        "| `core/plan/` | `contract_table.py` |\n\n"
        "Passes: `optimizers/passes/<name>_pass.cc`, `optimizers/passes/<name>_rule.cc`, `core/nowhere/x.py`.\n"
    )
    assert missing_paths(markdown_mentions(markdown)) == [
        "core/nowhere/x.py",
        "no_such_module.py",
        "optimizers/passes/<name>_rule.cc",
    ]
    layout = (ROOT / "docs/layout.md").read_text(encoding="utf-8")
    planted = layout.replace("iterations_loop.h", "iterations_loops.h")
    assert planted.count("iterations_loops.h") == 1
    assert missing_paths(doc_mentions(planted, tree=True)) == ["iterations_loops.h"]
    planted = layout.replace("npu_device/   ", "npu_devices/  ", 1)
    assert missing_paths(doc_mentions(planted, tree=True)) == ["npu_devices/"]
