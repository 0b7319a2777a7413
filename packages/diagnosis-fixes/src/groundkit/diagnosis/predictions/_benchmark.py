"""How well the predictions did when every fix was applied: the benchmark's figures, shipped.

``tests/benchmarks/bench_diagnosis_predictions.py`` applies every fix diagnosis proposes that
the harness can apply, each as a run of its own, and checks the prediction against the
measured gain's paired 95% interval. Its figures are kept here so that a user reading a
prediction (``grk eval diagnose --track-record``, the docs) reads how far to trust it; the
docs table is :func:`benchmark_table`, checked against the page by a test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from groundkit.diagnosis._names import FixName

__all__ = ["BENCHMARK_FIGURES", "FixFigure", "PredictionBenchmark", "benchmark_table"]

Mode = Literal["exact", "estimated", "--no-rerun"]


@dataclass(frozen=True)
class FixFigure:
    """One fix kind in one mode: predictions inside the measured interval, of those applied.

    Attributes:
        fix: The fix.
        mode: ``exact`` (replayed), ``estimated`` (as diagnosed, no replay possible) or
            ``--no-rerun`` (a chunk fix's estimate, when the stage is not re-run).
        inside: Predictions inside the measured 95% interval.
        total: Predictions checked.
    """

    fix: FixName
    mode: Mode
    inside: int
    total: int


@dataclass(frozen=True)
class PredictionBenchmark:
    """The benchmark's figures.

    Attributes:
        collections: The collections, each at its chunker and cutoff.
        figures: Per fix kind and mode.
        spearman: Rank correlation of predicted and measured gains, the fixes as diagnosed.
        estimated_spearman: The same over the estimates only (``--no-rerun`` ones included).
        measured: When and with what it was measured.
    """

    collections: tuple[str, ...]
    figures: tuple[FixFigure, ...]
    spearman: float
    estimated_spearman: float
    measured: str

    def share(self, mode: Mode) -> tuple[int, int]:
        """Predictions of ``mode`` inside their interval, and how many were checked."""
        chosen = [f for f in self.figures if f.mode == mode]
        return sum(f.inside for f in chosen), sum(f.total for f in chosen)

    def lines(self) -> list[str]:
        """The figures in two sentences, for a console."""
        exact, estimated = self.share("exact"), self.share("estimated")
        per_kind = ", ".join(
            f"{f.fix} {f.inside}/{f.total}" for f in self.figures if f.mode == "estimated"
        )
        return [
            f"In the prediction benchmark ({len(self.collections)} collections, every fix "
            f"applied and measured): exact predictions inside the measured 95% interval "
            f"{exact[0]}/{exact[1]}, estimated ones {estimated[0]}/{estimated[1]} "
            f"({per_kind}); predicted and measured gains rank alike at Spearman "
            f"{self.spearman:.2f}; estimates alone do not rank reliably (Spearman "
            f"{self.estimated_spearman:.2f}): treat an estimate as a lead, and apply the fix to "
            "measure it",
        ]


BENCHMARK_FIGURES = PredictionBenchmark(
    collections=(
        "beir/scifact chars:500:100 k=10",
        "chroma/chatlogs chars:400:0 k=5",
        "chroma/finance chars:400:0 k=5",
        "chroma/pubmed chars:400:0 k=5",
        "chroma/state_of_the_union chars:400:0 k=5",
        "chroma/wikitexts chars:400:0 k=5",
    ),
    figures=(
        FixFigure("raise-k", "exact", 6, 6),
        FixFigure("hybrid-fusion", "exact", 6, 6),
        FixFigure("larger-chunks", "exact", 6, 6),
        FixFigure("smaller-chunks", "exact", 6, 6),
        FixFigure("chunk-overlap", "exact", 6, 6),
        FixFigure("rerank", "estimated", 2, 6),
        FixFigure("dense", "estimated", 4, 6),
        FixFigure("larger-chunks", "--no-rerun", 2, 6),
        FixFigure("chunk-overlap", "--no-rerun", 2, 6),
    ),
    spearman=0.76,
    estimated_spearman=-0.05,
    measured=(
        "2026-12-05 on 2 CPU cores, BM25 and the packaged all-MiniLM-L6-v2 (dense, hybrid "
        "with BM25, and rerank over BM25's top 5k as a bi-encoder)"
    ),
)


def benchmark_table(benchmark: PredictionBenchmark = BENCHMARK_FIGURES) -> str:
    """The figures as the docs' Markdown table (the page holds exactly this text)."""
    rows = ["| fix | prediction | inside the measured 95% interval |", "|---|---|---|"]
    rows += [f"| `{f.fix}` | {f.mode} | {f.inside} of {f.total} |" for f in benchmark.figures]
    exact, estimated = benchmark.share("exact"), benchmark.share("estimated")
    rows.append("")
    rows.append(
        f"Exact predictions inside their interval: {exact[0]} of {exact[1]}; estimated: "
        f"{estimated[0]} of {estimated[1]}. Rank correlation of predicted and measured gains, "
        f"the fixes as diagnosed: Spearman {benchmark.spearman:.2f} (the estimates alone, "
        f"`--no-rerun` ones included: {benchmark.estimated_spearman:.2f}). Measured "
        f"{benchmark.measured}."
    )
    return "\n".join(rows)
