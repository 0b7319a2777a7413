"""The house's walls, measured from the source: no import cycle inside any distribution, no
folder over the module limit, and small public surfaces whose every name resolves.

A cycle counts every import a module makes (at module level, under ``TYPE_CHECKING`` and inside
functions), so a deferred import or a type-only one does not hide a knot. An import of
``package.module`` is an edge to that module, not to the package's ``__init__`` (whose lazy
re-exports import nothing themselves).
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ROOT / "packages"
MAX_FOLDER_MODULES = 15
MAX_TOP_LEVEL_NAMES = 50
# The packages whose top level the issue tracker curated; each lists where the rest live.
CURATED = {
    "groundkit.judgments": ("corpus", "files", "gold", "metrics", "report", "trec"),
    "groundkit.harness": ("analysis", "dense", "retrievers", "run", "sweep"),
    "groundkit.evalset": ("filters", "judge", "pool", "review"),
}


def _modules() -> dict[str, tuple[str, Path]]:
    """Every module of every distribution: dotted name -> (distribution folder, file)."""
    found: dict[str, tuple[str, Path]] = {}
    for dist in sorted(p for p in PACKAGES.iterdir() if (p / "src").is_dir()):
        for path in sorted((dist / "src").rglob("*.py")):
            parts = list(path.relative_to(dist / "src").with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = (dist.name, path)
    return found


def _target(name: str, modules: Mapping[str, object]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path, modules: Mapping[str, object]) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {t for a in node.names if (t := _target(a.name, modules))}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                target = whole if whole in modules else _target(base, modules)
                if target:
                    found.add(target)
    found.discard(module)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each module's imports of modules of its own distribution."""
    modules = _modules()
    return {
        name: {t for t in _imports(name, path, modules) if modules[t][0] == dist}
        for name, (dist, path) in modules.items()
    }


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_sees_the_distributions() -> None:
    graph = import_graph()
    assert len(graph) > 200
    assert "groundkit.harness.run._pipeline" in graph["groundkit.harness.run._stage_run"] or (
        "groundkit.harness.run._stage_run" in graph["groundkit.harness.run._pipeline"]
    )


def test_no_import_cycle_inside_any_distribution() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    # A check that cannot fail proves nothing: the three cycles of the old layout, in small.
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    two = cycles({"x": {"y"}, "y": {"x"}, "p": {"q"}, "q": {"p", "x"}})
    assert sorted(two) == [["p", "q"], ["x", "y"]]


_HIDDEN_IMPORTS = """\
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from pkg.a import X
def f():
    from pkg.b import y
    import pkg.c
"""


def test_type_only_and_deferred_imports_count(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(_HIDDEN_IMPORTS, encoding="utf-8")
    modules = dict.fromkeys(("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.m"), 0)
    assert _imports("pkg.m", tmp_path / "m.py", modules) == {"pkg.a", "pkg.b", "pkg.c"}


def test_no_folder_over_the_module_limit() -> None:
    over = {}
    for folder in sorted({p.parent for p in PACKAGES.glob("*/src/**/*.py")}):
        count = sum(1 for p in folder.glob("*.py") if p.name != "__init__.py")
        if count > MAX_FOLDER_MODULES:
            over[str(folder.relative_to(ROOT))] = count
    assert over == {}


@pytest.mark.parametrize("package", sorted(CURATED))
def test_curated_top_level_is_small_and_resolves(package: str) -> None:
    module = importlib.import_module(package)
    names = list(module.__all__)
    assert len(names) < MAX_TOP_LEVEL_NAMES, len(names)
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(module, name) is not None, name


@pytest.mark.parametrize(
    ("package", "sub"), [(p, s) for p, subs in sorted(CURATED.items()) for s in subs]
)
def test_every_sub_package_name_resolves(package: str, sub: str) -> None:
    module = importlib.import_module(f"{package}.{sub}")
    assert module.__doc__, f"{package}.{sub} says what it holds"
    names = list(module.__all__)
    assert names
    for name in names:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError):
        _ = module.no_such_name


def test_a_top_level_name_is_the_sub_package_s_object() -> None:
    # One object, two doors: the top level re-exports, it does not copy.
    from groundkit import judgments
    from groundkit.judgments import report, trec

    assert judgments.EvalReport is report.EvalReport
    assert judgments.read_qrels is trec.read_qrels


def test_every_file_the_architecture_page_names_exists() -> None:
    # ARCHITECTURE.md names the one file to read for each step; a move must update it.
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w./-]+\.(?:py|json|toml))`", text))
    assert len(named) > 20
    sources = [p.relative_to(ROOT).as_posix() for p in ROOT.glob("packages/*/src/groundkit/**/*")]
    missing = sorted(
        name
        for name in named
        if not (ROOT / name).is_file() and not any(s.endswith("/" + name) for s in sources)
    )
    assert missing == []
