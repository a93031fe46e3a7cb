"""README.md stays short and the reference lives in docs/: size, CI markers, and links that resolve."""

import pathlib
import re

import pytest
from helpers.markdown import anchors, github_anchor, without_fences
from helpers.paths import REPO_ROOT

ROOT = pathlib.Path(REPO_ROOT)
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_BYTES = 20_000

_CODE_SPAN = re.compile(r"(`+).+?\1", re.S)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # http:, https:, mailto:, ...


def _pages():
    return [README, ROOT / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md"))]


def _without_code(text):
    """Markdown text with fenced blocks and code spans blanked out: links there are not links."""
    return _CODE_SPAN.sub("", without_fences(text))


def broken_links(path, root=ROOT):
    """The relative links of a markdown page whose file, or whose #anchor in a markdown file, does not exist.

    Args:
      path: the page.
      root: links may not leave this directory.
    Returns:
      A list of "page: target (why)" strings, empty when every link resolves.
    """
    problems = []
    for target in _LINK.findall(_without_code(path.read_text(encoding="utf-8"))):
        if _EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path.resolve()
        if root.resolve() not in linked.parents and linked != root.resolve():
            problems.append(f"{path.name}: {target} (outside the repository)")
        elif not linked.exists():
            problems.append(f"{path.name}: {target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{path.name}: {target} (no heading #{anchor} in {linked.name})")
    return problems


def test_readme_is_at_most_20_kb():
    size = README.stat().st_size
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes; move reference material to docs/"


@pytest.mark.parametrize("name", ["install", "test"])
def test_readme_has_the_ci_command_blocks(name):
    # .ci/run reads each command with: sed -n "/<!-- ci:NAME -->/,/<!-- \/ci:NAME -->/p" | grep -v '^<!--' '^```'
    text = README.read_text(encoding="utf-8")
    start, end = f"<!-- ci:{name} -->", f"<!-- /ci:{name} -->"
    assert text.count(start) == 1 and text.count(end) == 1, name
    block = text[text.index(start) : text.index(end)].splitlines()[1:]
    commands = [line for line in block if line.strip() and not line.startswith(("<!--", "```"))]
    assert len(commands) == 1, block
    assert block[0] == "```bash" and block[-1] == "```", block


def test_readme_has_the_required_sections():
    headings = anchors(README)
    for anchor in ("install-and-run-the-quickstart", "run-the-tests", "quickstart", "troubleshooting", "license"):
        assert anchor in headings, anchor
    text = README.read_text(encoding="utf-8")
    for task in ("Run my script", "Compare precision", "Find the first overflow", "Profile", "Run 8 ranks"):
        assert f"\n| {task} |" in text, task
    assert "\n| Several hosts |" in text and "(docs/distributed.md#several-hosts)" in text


def test_generated_blocks_live_in_docs_not_in_the_readme():
    text = README.read_text(encoding="utf-8")
    assert not re.search(r"<!-- [\w-]+:start -->", text)
    docs_text = "".join(p.read_text(encoding="utf-8") for p in DOCS.glob("*.md"))
    for block in ("options-table", "unsupported-table", "mixed-precision-lists"):
        assert f"<!-- {block}:start -->" in docs_text, block


def test_every_docs_page_is_indexed():
    readme_links = set(_LINK.findall(README.read_text(encoding="utf-8")))
    index_links = set(_LINK.findall((DOCS / "README.md").read_text(encoding="utf-8")))
    for page in DOCS.glob("*.md"):
        if page.name != "README.md":
            assert f"docs/{page.name}" in readme_links, f"README.md does not link docs/{page.name}"
            assert page.name in index_links, f"docs/README.md does not link {page.name}"
    assert "docs/README.md" in readme_links


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert not broken_links(page), broken_links(page)


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_repository_paths_named_in_the_docs_exist(page):
    named = re.findall(
        r"`((?:npu_bridge|ops|optimizers|tests|hccl|examples|benchmarks|docs)/[\w/.-]*[\w/])`", page.read_text()
    )
    missing = sorted({p for p in named if not (ROOT / p).exists()})
    assert not missing, f"{page.name} names paths that do not exist: {missing}"


def test_the_link_check_finds_broken_links(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Several hosts: `npu-run`\n\n## Several hosts: `npu-run`\n")
    page = tmp_path / "README.md"
    page.write_text(
        "[ok](docs/a.md) [ok](docs/a.md#a-page) [ok](docs/a.md#several-hosts-npu-run-1) [ok](#top) [ok](https://x.y)\n"
        "`[code](missing.md)`\n\n```\n[fenced](missing.md)\n```\n\n# Top\n"
        "[gone](docs/b.md) [bad anchor](docs/a.md#several-hosts) [bad self](#nope) [out](../x.md)\n"
    )
    problems = broken_links(page, root=tmp_path / "docs" / "..")
    assert problems == [
        "README.md: docs/b.md (no such file)",
        "README.md: docs/a.md#several-hosts (no heading #several-hosts in a.md)",
        "README.md: #nope (no heading #nope in README.md)",
        "README.md: ../x.md (outside the repository)",
    ]


@pytest.mark.parametrize(
    "heading, anchor",
    [
        ("Multi-rank jobs: collectives and `npu-run`", "multi-rank-jobs-collectives-and-npu-run"),
        ("How iterations_per_loop works", "how-iterations_per_loop-works"),
        ("npu-dump: convert, compare, find the first overflow", "npu-dump-convert-compare-find-the-first-overflow"),
        (
            "Precision, the simulated Ascend backend and loss scaling",
            "precision-the-simulated-ascend-backend-and-loss-scaling",
        ),
    ],
)
def test_github_anchor(heading, anchor):
    assert github_anchor(heading) == anchor
