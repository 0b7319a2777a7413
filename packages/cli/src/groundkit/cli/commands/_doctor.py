"""``grk doctor``: what is installed, which device a dense stage would use, where caches are.

Everything it reports is read from the installed distributions' metadata (the extras and
their requirements come from groundkit-cli's own metadata, so the list cannot drift from
``pyproject.toml``), from torch when it is installed, and from the cache settings' defaults.
It changes nothing and makes no network call.
"""

from __future__ import annotations

import json
import platform
import re
import sys
from importlib import metadata
from typing import Any

import click

__all__ = ["doctor_command", "doctor_facts"]

_DISTRIBUTIONS = (
    "groundkit-cli",
    "groundkit-core-judgments",
    "groundkit-stats-bootstrap",
    "groundkit-adapters-beir",
    "groundkit-evalset-quality",
    "groundkit-diagnosis-fixes",
)
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?[^;]*;\s*(.*)$")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
_CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _extras() -> dict[str, dict[str, str | None]]:
    """Each extra of groundkit-cli: its requirements and the version installed (or None)."""
    try:
        requirements = metadata.requires("groundkit-cli") or []
    except metadata.PackageNotFoundError:
        return {}
    extras: dict[str, dict[str, str | None]] = {}
    for requirement in requirements:
        match = _REQUIREMENT.match(requirement)
        extra = _EXTRA.search(match.group(3)) if match else None
        if match is None or extra is None:
            continue
        extras.setdefault(extra.group(1), {})[match.group(1)] = _version(match.group(1))
    return dict(sorted(extras.items()))


def _torch() -> dict[str, Any]:
    """The torch build and the device ``device = "auto"`` picks (nothing when not installed)."""
    if _version("torch") is None:
        return {"installed": False, "device": "cpu (torch is not installed)"}
    import torch

    from groundkit.harness.dense import resolve_device

    cuda = getattr(torch.version, "cuda", None)
    facts: dict[str, Any] = {
        "installed": True,
        "version": torch.__version__,
        "build": f"CUDA {cuda}" if cuda else "CPU only",
        "device": resolve_device("auto"),
    }
    if facts["device"] == "cuda":
        facts["gpus"] = [
            torch.cuda.get_device_name(index) for index in range(torch.cuda.device_count())
        ]
    elif cuda:
        facts["hint"] = (
            "this torch is a CUDA build but no GPU is visible: on a CPU-only machine the CPU "
            f"build is a tenth of the size ({_CPU_TORCH})"
        )
    return facts


def _cores() -> dict[str, Any]:
    """The cores a run's workers use, and why: the processors allowed and the CPU quota."""
    from groundkit.stats.kernels import allowed_processors, available_cores, cgroup_cpu_limit

    return {
        "used": available_cores(),
        "processors": allowed_processors(),
        "cpu_limit": cgroup_cpu_limit(),
    }


def _caches() -> dict[str, str]:
    from groundkit.cli.judges._cache_dir import judge_cache_dir
    from groundkit.harness.dense import default_cache_dir

    return {
        "embeddings": f"{default_cache_dir()} (embedding_cache_dir in a run config sets it)",
        "judge answers": f"{judge_cache_dir()} (one file per judge, shared by every command; "
        "--cache or GROUNDKIT_JUDGE_CACHE_DIR sets it)",
    }


def doctor_facts() -> dict[str, Any]:
    """Everything ``grk doctor`` prints, as data (``--json``)."""
    return {
        "python": f"{platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
        "groundkit": {name: _version(name) for name in _DISTRIBUTIONS},
        "extras": _extras(),
        "torch": _torch(),
        "cores": _cores(),
        "caches": _caches(),
    }


def _lines(facts: dict[str, Any]) -> list[str]:
    lines = [f"python    {facts['python']}", f"platform  {facts['platform']}", "groundkit"]
    for name, version in facts["groundkit"].items():
        lines.append(f"  {name:<26} {version or 'not installed'}")
    lines.append("extras (pip install 'groundkit-cli[EXTRA]')")
    for extra, packages in facts["extras"].items():
        missing = [name for name, version in packages.items() if version is None]
        state = "ready" if not missing else f"missing {', '.join(missing)}"
        shown = ", ".join(f"{n} {v}" for n, v in packages.items() if v is not None)
        lines.append(f"  {extra:<11} {state}" + (f" ({shown})" if shown and missing else ""))
    torch = facts["torch"]
    if torch["installed"]:
        lines.append(f"torch     {torch['version']}, {torch['build']}")
    lines.append(f'dense stages with device = "auto" run on: {torch["device"]}')
    lines += [f"  GPU {index}: {name}" for index, name in enumerate(torch.get("gpus", []))]
    if "hint" in torch:
        lines.append(f"  note: {torch['hint']}")
    cores = facts["cores"]
    limit = cores["cpu_limit"]
    quota = "no CPU limit" if limit is None else f"a CPU limit of {limit:g} by its control group"
    lines.append(
        f"cores     {cores['used']} for a run's workers ({cores['processors']} processors "
        f"allowed, {quota})"
    )
    lines.append("caches")
    lines += [f"  {name:<14} {where}" for name, where in facts["caches"].items()]
    return lines


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON.")
def doctor_command(as_json: bool) -> None:
    """What is installed, which device a dense stage would use, and where the caches are."""
    facts = doctor_facts()
    if as_json:
        click.echo(json.dumps(facts, indent=1, ensure_ascii=False))
        return
    click.echo("\n".join(_lines(facts)))
