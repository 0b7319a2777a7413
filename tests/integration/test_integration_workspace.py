"""The workspace is every folder under packages/: the places that must name each one agree."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.integration.test_integration_isolation import DISTRIBUTIONS
from tests.integration.test_integration_layers import LAYER

REPO = Path(__file__).resolve().parents[2]


def _folders() -> set[str]:
    return {p.parent.name for p in (REPO / "packages").glob("*/pyproject.toml")}


def test_hatch_and_ruff_take_every_package_by_glob() -> None:
    hatch = tomllib.loads((REPO / "hatch.toml").read_text(encoding="utf-8"))
    for env in ("default", "bench"):
        members = hatch["envs"][env]["workspace"]["members"]
        paths = [m if isinstance(m, str) else m["path"] for m in members]
        assert paths == ["packages/*"], env
    assert hatch["envs"]["default"]["scripts"]["types"] == "mypy packages/*/src"
    root = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "packages/*/src" in root["tool"]["ruff"]["src"]


def test_the_lists_that_cannot_glob_name_every_package() -> None:
    root = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    # mypy's search path takes no glob; the layer tables hold facts about each distribution.
    assert {Path(p).parent.name for p in root["tool"]["mypy"]["mypy_path"]} == _folders()
    assert {folder for folder, _ in DISTRIBUTIONS.values()} == _folders()
    names = {
        tomllib.loads((REPO / "packages" / f / "pyproject.toml").read_text("utf-8"))["project"][
            "name"
        ]
        for f in _folders()
    }
    assert set(LAYER) == names == set(DISTRIBUTIONS)
