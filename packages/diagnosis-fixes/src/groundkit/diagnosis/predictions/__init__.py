"""What predictions are measured against: the harness's re-runs of a stage, and the benchmark."""

from groundkit.diagnosis.predictions._benchmark import (
    BENCHMARK_FIGURES,
    FixFigure,
    PredictionBenchmark,
    benchmark_table,
)
from groundkit.diagnosis.predictions._rerun import (
    CHUNK_FIXES,
    RerunStage,
    chunk_variant,
    chunker_text,
)

__all__ = [
    "BENCHMARK_FIGURES",
    "CHUNK_FIXES",
    "FixFigure",
    "PredictionBenchmark",
    "RerunStage",
    "benchmark_table",
    "chunk_variant",
    "chunker_text",
]
