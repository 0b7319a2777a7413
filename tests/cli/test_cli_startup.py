"""Start fast: ``grk --help`` and a light command import only what they need (issue 15, item 4).

Each check runs ``grk`` in a fresh interpreter and lists the modules it loaded, so an import
moved back to module level (a command module at registration, scipy in a statistics module,
the pipeline behind an items comparison) fails here rather than only in the benchmark.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from groundkit.harness import write_items
from groundkit.judgments import EvalReport, QueryResult, StageReport
from groundkit.judgments.report import GoldEvidence, QueryInfo, RunInfo

# Loaded by none of the commands checked here (numpy and pydantic: not by ``--help``).
HEAVY = (
    "torch",
    "sentence_transformers",
    "transformers",
    "scipy",
    "bm25s",
    "jinja2",
    "matplotlib",
    "faiss",
    "rich.progress",
)
NOT_FOR_HELP = (*HEAVY, "numpy", "pydantic", "rich", "groundkit.judgments", "groundkit.stats")
# An items comparison needs the statistics (scipy.stats) but none of the run's machinery.
NOT_FOR_ITEMS = (
    "torch",
    "sentence_transformers",
    "transformers",
    "bm25s",
    "jinja2",
    "matplotlib",
    "faiss",
    "groundkit.harness.run._pipeline",
    "groundkit.harness.run._config",
    "groundkit.diagnosis._diagnose",
    "groundkit.cli.html._report",
    "groundkit.cli.compare._report",
    "groundkit.cli.run._run",
)

_PROBE = """
import json, sys
from groundkit.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print("\\n@@MODULES@@" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def loaded_by(*args: str) -> tuple[int, set[str]]:
    """Run ``grk ARGS`` in a fresh interpreter; its exit code and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, check=False
    )
    payload = json.loads(done.stdout.rsplit("@@MODULES@@", 1)[1])
    return int(payload["code"] or 0), set(payload["modules"])


def _heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_help_imports_no_heavy_module() -> None:
    code, modules = loaded_by("--help")
    assert code == 0
    assert _heavy(modules, NOT_FOR_HELP) == []
    assert "click" in modules  # the probe does see what the command loaded


@pytest.mark.parametrize("group", ["eval", "beir", "evalset"])
def test_group_help_lists_every_command_without_running_one(group: str) -> None:
    code, modules = loaded_by(group, "--help")
    assert code == 0
    assert _heavy(modules, ("torch", "sentence_transformers", "bm25s", "faiss")) == []


def test_every_named_command_resolves() -> None:
    import click

    from groundkit.cli._main import cli

    for group_name in ("eval", "beir", "evalset"):
        group = cli.commands[group_name]
        assert isinstance(group, click.Group)
        context = click.Context(group)
        names = group.list_commands(context)
        assert names == sorted(names)
        assert names
        for name in names:
            command = group.get_command(context, name)
            assert command is not None
            assert command.name == name


def _items(path: Path, outcome: list[float]) -> Path:
    ids = [f"q{i}" for i in range(len(outcome))]
    report = EvalReport(
        run=RunInfo(
            created_at="2024-01-01T00:00:00Z",
            package_versions={},
            corpus_fingerprint="0" * 64,
            judgments_fingerprint="0" * 64,
        ),
        queries=[
            QueryInfo(query_id=q, query=f"question {q}", gold=[GoldEvidence(doc="d", quote="x")])
            for q in ids
        ],
        stages=[
            StageReport(
                name="bm25",
                kind="bm25",
                baseline=True,
                queries=[
                    QueryResult(query_id=q, scores={"recall@10": v, "mrr": v / 2})
                    for q, v in zip(ids, outcome, strict=True)
                ],
            )
        ],
    )
    write_items(report, path)
    return path


def test_items_compare_imports_no_pipeline(tmp_path: Path) -> None:
    a = _items(tmp_path / "a.items.jsonl", [1.0, 0.0] * 10)
    b = _items(tmp_path / "b.items.jsonl", [1.0, 1.0] * 10)
    code, modules = loaded_by("eval", "compare", str(a), str(b))
    assert code == 0
    assert _heavy(modules, NOT_FOR_ITEMS) == []
    assert "groundkit.stats" in modules  # it did compare


def test_scipy_is_not_imported_by_the_statistics_package() -> None:
    probe = "import sys, groundkit.stats; print('scipy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_numeric_items_compare_loads_neither_scipy_stats_nor_report_models(tmp_path: Path) -> None:
    # Graded (non right-or-wrong) scores: t, the fair binomial and Brent's root come through
    # scipy.special (groundkit.stats.kernels._special); the report models are not needed to
    # read items.
    a = _items(tmp_path / "a.items.jsonl", [(i % 7) / 7 for i in range(40)])
    b = _items(tmp_path / "b.items.jsonl", [((i * 3) % 7) / 7 for i in range(40)])
    code, modules = loaded_by("eval", "compare", str(a), str(b), "--metric", "mrr")
    assert code in (0, 1)
    assert "scipy.special" in modules  # it did compute
    assert (
        _heavy(modules, ("scipy.stats", "scipy.optimize", "groundkit.judgments.report._models"))
        == []
    )


@pytest.mark.parametrize("group", ["eval", "evalset", "beir"])
def test_a_groups_help_imports_no_command_module(group: str) -> None:
    code, modules = loaded_by(group, "--help")
    assert code == 0
    assert _heavy(modules, NOT_FOR_HELP) == []
    assert not any(m.startswith("groundkit.cli.commands.") for m in modules)


def test_the_listed_summaries_are_the_commands_own() -> None:
    import click

    from groundkit.cli._main import _COMMANDS

    for group, entries in _COMMANDS.items():
        context = click.Context(group)
        for name in entries:
            command = group.get_command(context, name)
            assert command is not None
            del group.commands[name]  # listed from the table, as before any import
            # The room a listing leaves at 80 and 100 columns (names up to 12 characters).
            for width in (80, 100, 10**6):
                formatter = click.HelpFormatter(width=width)
                group.format_commands(context, formatter)
                line = next(
                    line for line in formatter.getvalue().splitlines() if line.split()[:1] == [name]
                )
                limit = width - 6 - max(len(n) for n in group.list_commands(context))
                assert line.split(None, 1)[1] == command.get_short_help_str(limit), name
            group.add_command(command)


# Every subcommand: its --help loads none of the run's machinery (the command's module defers
# it: groundkit.cli._lazy), and its options read their defaults from plain constants
# (groundkit.cli._defaults), not from the config models.
FAST_HELP = (
    ("doctor",),
    ("beir", "adapt"),
    ("eval", "run"),
    ("eval", "demo"),
    ("eval", "compare"),
    ("eval", "reproduce"),
    ("eval", "diagnose"),
    ("eval", "track-record"),
    ("eval", "report"),
    ("eval", "trec"),
    ("eval", "export"),
    ("eval", "adjudicate"),
    ("eval", "calibrate"),
    ("eval", "pool"),
    ("eval", "sample"),
    ("eval", "sheet"),
    ("eval", "sweep"),
    ("evalset", "assess"),
    ("evalset", "filter"),
    ("evalset", "classify"),
    ("evalset", "review"),
    ("evalset", "generate"),
)
NOT_FOR_SUBCOMMAND_HELP = (
    *(m for m in HEAVY if m != "rich.progress"),
    "numpy",
    "pydantic",
    "httpx",
    "groundkit.stats",
)


@pytest.mark.parametrize("command", FAST_HELP, ids=" ".join)
def test_a_subcommands_help_loads_no_heavy_module(command: tuple[str, ...]) -> None:
    code, modules = loaded_by(*command, "--help")
    assert code == 0
    assert _heavy(modules, NOT_FOR_SUBCOMMAND_HELP) == [], command


def test_every_registered_command_has_its_help_checked() -> None:
    from groundkit.cli._main import _COMMANDS, cli

    registered = {
        (*(() if group is cli else (str(group.name),)), name)
        for group, entries in _COMMANDS.items()
        for name in entries
    }
    assert registered == set(FAST_HELP)


def _int_bounds(model: type[Any], name: str) -> tuple[int | None, int | None]:
    """The inclusive bounds of an integer field, from its ``gt``/``ge``/``lt``/``le``."""
    low: int | None = None
    high: int | None = None
    for item in model.model_fields[name].metadata:
        if isinstance(getattr(item, "gt", None), int):
            low = item.gt + 1
        elif isinstance(getattr(item, "ge", None), int):
            low = item.ge
        elif isinstance(getattr(item, "lt", None), int):
            high = item.lt - 1
        elif isinstance(getattr(item, "le", None), int):
            high = item.le
    return low, high


def test_the_defaults_help_shows_are_the_models_own() -> None:
    # --help reads plain constants (no pydantic); the models take their field defaults from the
    # same constants. What _defaults derives from them (the --k range, the chunkers' text) must
    # say what the models do.
    from groundkit.cli import _defaults
    from groundkit.harness import CommandRetriever, EvalSettings
    from groundkit.harness.run import MAX_RESAMPLES, default_chunker, default_headline_metrics
    from groundkit.judgments import chunker_spec
    from groundkit.judgments.report import BootstrapSettings

    def default(model: type[Any], name: str) -> Any:
        return model.model_fields[name].get_default(call_default_factory=True)

    assert default(EvalSettings, "depth") == _defaults.DEFAULT_DEPTH
    assert _int_bounds(EvalSettings, "depth") == _defaults.DEPTH_RANGE
    assert default(EvalSettings, "min_overlap_fraction") == _defaults.DEFAULT_MIN_OVERLAP
    assert default(CommandRetriever, "timeout") == _defaults.DEFAULT_COMMAND_TIMEOUT
    assert " ".join(default_headline_metrics("chunk")) == _defaults.DEFAULT_METRICS
    chunkers = (
        f"{chunker_spec(default_chunker('chunk'))}; "
        f"{chunker_spec(default_chunker('document'))} at --level document"
    )
    assert chunkers == _defaults.DEFAULT_CHUNKERS
    assert default(BootstrapSettings, "resamples") == _defaults.DEFAULT_RESAMPLES
    assert default(BootstrapSettings, "seed") == _defaults.DEFAULT_SEED
    assert default(BootstrapSettings, "multiplicity") == _defaults.DEFAULT_MULTIPLICITY
    assert _int_bounds(BootstrapSettings, "resamples") == (1, MAX_RESAMPLES)
