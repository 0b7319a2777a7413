"""Each distribution installs and works alone, with only its declared dependencies.

For every distribution: build its wheel (and the wheels of the groundkit distributions it
declares), install them into a fresh virtual environment (third-party dependencies come from
the package index, as for a user), import every module it ships, check that the groundkit
distributions it does not declare are absent, and run its own test folder against that
install. This is what a user who does `pip install groundkit-stats-bootstrap` gets.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# distribution -> (package folder, test folder, groundkit distributions it declares)
DISTRIBUTIONS: dict[str, tuple[str, str]] = {
    "groundkit-stats-bootstrap": ("stats-bootstrap", "stats_bootstrap"),
    "groundkit-core-judgments": ("core-judgments", "core_judgments"),
    "groundkit-adapters-beir": ("adapters-beir", "adapters_beir"),
    "groundkit-evalset-quality": ("evalset-quality", "evalset_quality"),
    "groundkit-diagnosis-fixes": ("diagnosis-fixes", "diagnosis_fixes"),
    "groundkit-cli": ("cli", "cli"),
}
ROOT_MODULES = {
    "groundkit-stats-bootstrap": "groundkit.stats",
    "groundkit-core-judgments": "groundkit.judgments",
    "groundkit-adapters-beir": "groundkit.adapters.beir",
    "groundkit-evalset-quality": "groundkit.evalset",
    "groundkit-diagnosis-fixes": "groundkit.diagnosis",
    "groundkit-cli": "groundkit.cli",
}
TEST_TOOLS = ["pytest>=8", "hypothesis>=6.100"]

pytestmark = [pytest.mark.isolation, pytest.mark.slow]


def _groundkit_dependencies(dist: str) -> list[str]:
    folder = DISTRIBUTIONS[dist][0]
    meta = tomllib.loads((REPO / "packages" / folder / "pyproject.toml").read_text("utf-8"))
    names = [
        dep.split(">")[0].split("<")[0].split("=")[0].strip()
        for dep in meta["project"]["dependencies"]
    ]
    direct = [n for n in names if n.startswith("groundkit-")]
    closure: list[str] = []
    for name in direct:
        for item in [*_groundkit_dependencies(name), name]:
            if item not in closure:
                closure.append(item)
    return closure


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wheels")
    built: dict[str, Path] = {}
    for dist, (folder, _) in DISTRIBUTIONS.items():
        before = set(out.glob("*.whl"))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--quiet",
                "-w",
                str(out),
                str(REPO / "packages" / folder),
            ],
            check=True,
        )
        (new,) = set(out.glob("*.whl")) - before
        built[dist] = new
    return built


def _modules_in_wheel(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        files = [n for n in archive.namelist() if n.endswith(".py") and n.startswith("groundkit/")]
    modules = []
    for name in sorted(files):
        parts = name[: -len(".py")].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts[-1] == "__main__":
            continue
        modules.append(".".join(parts))
    return modules


def _run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    return subprocess.run(argv, capture_output=True, text=True, env=env, **kwargs)  # type: ignore[call-overload,no-any-return]


@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
def test_distribution_installs_imports_and_passes_alone(
    dist: str, wheels: dict[str, Path], tmp_path: Path
) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = str(env_dir / ("Scripts" if os.name == "nt" else "bin") / "python")
    needed = [*_groundkit_dependencies(dist), dist]
    install = _run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *(str(wheels[name]) for name in needed),
            *TEST_TOOLS,
        ]
    )
    assert install.returncode == 0, install.stderr[-3000:]

    modules = _modules_in_wheel(wheels[dist])
    assert modules, f"{dist} ships no modules"
    code = "import importlib, sys\nfor m in sys.argv[1:]:\n    importlib.import_module(m)\n"
    imported = _run([python, "-c", code, *modules])
    assert imported.returncode == 0, f"importing {dist} alone failed:\n{imported.stderr[-3000:]}"

    for other, module in ROOT_MODULES.items():
        if other in needed:
            continue
        absent = _run([python, "-c", f"import {module}"])
        assert absent.returncode != 0, f"{module} is importable beside {dist} alone"

    where = _run([python, "-c", f"import {ROOT_MODULES[dist]} as m; print(m.__file__)"])
    assert Path(where.stdout.strip()).resolve().is_relative_to(env_dir.resolve()), where.stdout

    # The distribution's own tests, against the isolated install (not the source tree).
    test_dir = REPO / "tests" / DISTRIBUTIONS[dist][1]
    result = _run(
        [
            python,
            "-m",
            "pytest",
            str(test_dir),
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "-m",
            "not dense and not browser and not isolation",
            "--rootdir",
            str(REPO),
        ],
        cwd=str(REPO),
    )
    assert result.returncode == 0, (
        f"{dist}'s tests failed (or none ran) against its isolated install:\n"
        f"{result.stdout[-4000:]}\n{result.stderr[-2000:]}"
    )
