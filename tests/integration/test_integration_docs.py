"""The documentation cannot drift from the code: every example in it runs, and the site builds.

Rules for pages under ``docs/pages`` (summarised for readers on ``docs/pages/index.md``):

* Every ```` ```python ```` block runs. Blocks of one page run in order in one shared namespace,
  in a fresh temporary working folder, so a later block sees the names and files an earlier
  one made.
* In every ```` ```console ````, ```` ```bash ````, ```` ```sh ```` or ```` ```shell ```` block,
  each line that starts with ``grk `` or ``$ grk `` (continued with a trailing ``\\``) runs
  through click's ``CliRunner`` in that same folder and must exit 0. Other lines (output, or
  commands that are not ``grk``) are not run.
* An HTML comment on the line just before a block changes that: ``<!-- docs-test: skip
  REASON -->`` leaves the block out (a reason is required; use it sparingly) and
  ``<!-- docs-test: exit-code N -->`` expects every ``grk`` command of the block to exit N.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = DOCS / "pages"
CONFIG = DOCS / "mkdocs.yml"

PYTHON_LANGS = frozenset({"python", "py"})
SHELL_LANGS = frozenset({"console", "bash", "sh", "shell"})
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str | None  # the docs-test marker just before the fence, if any

    @property
    def where(self) -> str:
        return f"docs/pages/{self.page}:{self.line}"

    @property
    def skip_reason(self) -> str | None:
        if self.marker is not None and self.marker.startswith("skip"):
            return self.marker.removeprefix("skip").strip()
        return None

    @property
    def expected_exit_code(self) -> int:
        if self.marker is not None and self.marker.startswith("exit-code"):
            return int(self.marker.removeprefix("exit-code").strip())
        return 0

    def grk_commands(self) -> list[list[str]]:
        """The ``grk`` command lines of a shell block, as argument lists (without ``grk``)."""
        commands: list[list[str]] = []
        pending = ""
        for raw in self.code.splitlines():
            line = raw.rstrip()
            if pending:
                pending += " " + line.strip()
            else:
                text = line.strip()
                text = text[2:] if text.startswith("$ ") else text
                if not text.startswith("grk "):
                    continue
                pending = text
            if pending.endswith("\\"):
                pending = pending[:-1].rstrip()
                continue
            argv = shlex.split(pending, comments=True)
            commands.append(argv[1:])
            pending = ""
        return commands


def parse_blocks(path: Path, root: Path = PAGES) -> list[Block]:
    """Every fenced block of a markdown page, with the docs-test marker that precedes it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(root).as_posix()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if match is None:
            index += 1
            continue
        indent, fence = match["indent"], match["fence"]
        lang = match["info"].split("{")[0].strip().lower()
        marker = None
        previous = index - 1
        while previous >= 0 and not lines[previous].strip():
            previous -= 1
        if previous >= 0 and (found := _MARKER.match(lines[previous])) is not None:
            marker = found["body"]
        body: list[str] = []
        end = index + 1
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        while end < len(lines) and closing.match(lines[end]) is None:
            body.append(lines[end][len(indent) :] if lines[end].startswith(indent) else lines[end])
            end += 1
        if end == len(lines):
            raise AssertionError(f"docs/pages/{page}:{index + 1}: unclosed code fence")
        blocks.append(Block(page, index + 1, lang, "\n".join(body) + "\n", marker))
        index = end + 1
    return blocks


def _all_pages() -> list[Path]:
    return sorted(PAGES.rglob("*.md"))


def _runnable(block: Block) -> bool:
    if block.lang in PYTHON_LANGS:
        return True
    return block.lang in SHELL_LANGS and bool(block.grk_commands())


def _pages_with_examples() -> list[str]:
    return [
        path.relative_to(PAGES).as_posix()
        for path in _all_pages()
        if any(_runnable(block) for block in parse_blocks(path))
    ]


def _run_grk(block: Block, argv: list[str]) -> None:
    from groundkit.cli import cli

    result = CliRunner().invoke(cli, argv, prog_name="grk")
    expected = block.expected_exit_code
    if result.exit_code != expected:
        detail = ""
        if result.exc_info is not None and not isinstance(result.exception, SystemExit):
            import traceback

            detail = "".join(traceback.format_exception(*result.exc_info))
        pytest.fail(
            f"{block.where}: `grk {shlex.join(argv)}` exited {result.exit_code}, expected "
            f"{expected}\n--- output ---\n{result.output}\n{detail}",
            pytrace=False,
        )


@pytest.mark.parametrize("page", _pages_with_examples())
def test_docs_examples_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every python block and every grk command of the page runs, in order, as documented."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for block in parse_blocks(PAGES / page):
        if block.skip_reason is not None or not _runnable(block):
            continue
        if block.lang in PYTHON_LANGS:
            code = compile(block.code, block.where, "exec")
            try:
                exec(code, namespace)
            except Exception as exc:  # the failing block is named in the message
                raise AssertionError(f"{block.where}: python block failed: {exc!r}") from exc
        else:
            for argv in block.grk_commands():
                _run_grk(block, argv)


def test_docs_markers_are_well_formed() -> None:
    """Markers say skip-with-a-reason or an exit code, and stand before a runnable block."""
    problems: list[str] = []
    for path in _all_pages():
        text = path.read_text(encoding="utf-8")
        blocks = parse_blocks(path)
        marked = sum(1 for block in blocks if block.marker is not None)
        if marked != sum(1 for line in text.splitlines() if _MARKER.match(line)):
            problems.append(f"{path.name}: a docs-test marker does not stand before a block")
        for block in blocks:
            if block.marker is None:
                continue
            if block.skip_reason is not None:
                if not block.skip_reason:
                    problems.append(f"{block.where}: skip marker without a reason")
            elif re.fullmatch(r"exit-code [0-9]+", block.marker) is None:
                problems.append(f"{block.where}: unknown marker {block.marker!r}")
            elif not block.grk_commands():
                problems.append(f"{block.where}: exit-code marker on a block without grk commands")
            if not _runnable(block):
                problems.append(f"{block.where}: marker on a block that never runs")
    assert not problems, "\n".join(problems)


def test_docs_examples_are_found() -> None:
    """The extractor sees the examples (guards against a parser that silently finds nothing)."""
    blocks = [block for path in _all_pages() for block in parse_blocks(path)]
    python = [b for b in blocks if b.lang in PYTHON_LANGS and b.skip_reason is None]
    commands = [c for b in blocks if b.lang in SHELL_LANGS for c in b.grk_commands()]
    assert len(python) >= 40, f"only {len(python)} python examples found"
    assert len(commands) >= 25, f"only {len(commands)} grk commands found"
    skipped = [b.where for b in blocks if b.skip_reason]
    assert len(skipped) <= 5, f"too many skipped examples: {skipped}"


def test_docs_parser_reads_markers_and_continuations(tmp_path: Path) -> None:
    """The block parser itself: fences, indentation, markers, continuation lines."""
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n"
        "<!-- docs-test: exit-code 2 -->\n"
        "```console\n$ grk eval run --corpus 'my docs/' \\\n"
        "    --judgments j.jsonl\nerror: x\n```\n\n"
        "!!! note\n    ```python\n    x = 1\n    ```\n\n"
        "```bash\npip install groundkit-cli\n```\n",
        encoding="utf-8",
    )
    blocks = parse_blocks(page, root=tmp_path)
    assert [b.lang for b in blocks] == ["console", "python", "bash"]
    assert blocks[0].expected_exit_code == 2
    assert blocks[0].grk_commands() == [
        ["eval", "run", "--corpus", "my docs/", "--judgments", "j.jsonl"]
    ]
    assert blocks[1].code == "x = 1\n"
    assert blocks[1].marker is None
    assert blocks[2].grk_commands() == []


def test_docs_api_reference_covers_every_distribution() -> None:
    """One API page per distribution, rendering its root module with mkdocstrings."""
    directives = {
        line.removeprefix(":::").strip()
        for path in (PAGES / "reference" / "api").glob("*.md")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith(":::")
    }
    expected = {
        "groundkit.stats",
        "groundkit.judgments",
        "groundkit.adapters.beir",
        "groundkit.evalset",
        "groundkit.diagnosis",
        "groundkit.cli",
        "groundkit.harness",
    }
    assert expected <= directives, f"missing API pages for {sorted(expected - directives)}"


def test_docs_metric_page_lists_every_metric_kind() -> None:
    """Each metric family of the code has a section on the metrics page."""
    from groundkit.judgments.metrics import METRIC_KINDS

    text = (PAGES / "concepts" / "metrics.md").read_text(encoding="utf-8")
    headings = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    missing = [kind for kind in METRIC_KINDS if f"`{kind}" not in headings]
    assert not missing, f"metrics page has no section for {missing}"


def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` as the docs script runs it: warnings printed, and counted.

    No ``--quiet``: it hides the warnings that strict mode turns into a failure.
    """
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=site.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _warnings(completed: subprocess.CompletedProcess[str]) -> list[str]:
    output = completed.stdout + completed.stderr
    return [line for line in output.splitlines() if line.startswith(("WARNING", "ERROR"))]


@pytest.mark.slow
def test_docs_build_strict(tmp_path: Path) -> None:
    """`mkdocs build --strict` succeeds with no warning: no broken link, anchor, API object."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (the hatch environment installs it)")
    completed = _mkdocs_build(CONFIG, tmp_path / "site")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert _warnings(completed) == []
    assert (tmp_path / "site" / "reference" / "cli.html").is_file()
    assert (tmp_path / "site" / "reference" / "api" / "judgments.html").is_file()


def test_docs_build_fails_on_a_broken_link_or_anchor(tmp_path: Path) -> None:
    """The same build, with this site's validation settings, fails on a link that breaks."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (the hatch environment installs it)")
    ours = CONFIG.read_text(encoding="utf-8")
    validation = ours[ours.index("validation:") : ours.index("nav:")]
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "index.md").write_text("# Home\n\nSee [the other](other.md#a-heading).\n")
    (pages / "other.md").write_text("# Other\n\n## A heading\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\ndocs_dir: pages\nstrict: true\n{validation}", "utf-8")
    assert _mkdocs_build(config, tmp_path / "site").returncode == 0
    for broken in ("other.md#no-such-heading", "missing.md"):
        (pages / "index.md").write_text(f"# Home\n\nSee [the other]({broken}).\n")
        completed = _mkdocs_build(config, tmp_path / "site")
        assert completed.returncode != 0, broken
        assert _warnings(completed), broken


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """The heading anchors of a markdown page, as GitHub and mkdocs' toc make them."""
    anchors = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") and not line.startswith("#!"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def test_repository_pages_link_to_what_exists() -> None:
    """README, CONTRIBUTING, ARCHITECTURE and each package README: every relative link lands."""
    pages = [REPO / n for n in ("README.md", "CONTRIBUTING.md", "ARCHITECTURE.md")]
    pages += sorted(REPO.glob("packages/*/README.md"))
    broken = []
    for page in pages:
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path) if path else page
            if not resolved.exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert broken == []
