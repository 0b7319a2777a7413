"""Run configuration: models, the baseline rule, and the TOML loader's errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from groundkit.harness import (
    Bm25Retriever,
    CallableRetriever,
    CommandRetriever,
    ConfigError,
    DenseRetriever,
    EvalSettings,
    HarnessError,
    PredictionsRetriever,
    RunConfig,
    StageConfig,
    load_run_config,
)
from groundkit.harness.run import stage_config_hash
from groundkit.judgments import CharsChunker, DocumentChunker, ParagraphsChunker, SentencesChunker

FULL_EXAMPLE = """
corpus = "corpus"
judgments = "judgments.jsonl"
level = "chunk"
depth = 50
cutoffs = [10, 1, 5]
budgets = [2000, 1000]
min_overlap_fraction = 0.25
headline_metrics = ["recall@10", "mrr"]
embedding_cache_dir = ".cache/embeddings"

[chunker]
kind = "chars"
size = 800
overlap = 100

[bootstrap]
resamples = 500
seed = 11

[[stages]]
name = "minilm"
retriever = { kind = "dense", batch_size = 16 }
chunker = { kind = "sentences", max_sentences = 3 }

[[stages]]
name = "bm25"
[stages.retriever]
kind = "bm25"
k1 = 1.2

[[stages]]
name = "hybrid"
retriever = { kind = "hybrid", stages = ["bm25", "minilm"] }

[[stages]]
name = "mine"
retriever = { kind = "command", argv = ["python", "retrieve.py", "{in}", "{out}"], timeout = 30 }

[[stages]]
name = "func"
retriever = { kind = "callable", target = "tools/search.py:search" }

[[stages]]
name = "file"
retriever = { kind = "predictions", path = "runs/bm25.trec" }
"""


def test_full_example_loads_with_paths_resolved(tmp_path: Path) -> None:
    path = tmp_path / "groundkit.toml"
    path.write_text(FULL_EXAMPLE, encoding="utf-8")
    config = load_run_config(path)
    base = tmp_path.resolve()
    assert config.corpus == base / "corpus"
    assert config.judgments == base / "judgments.jsonl"
    assert config.embedding_cache_dir == base / ".cache/embeddings"
    assert config.cutoffs == [1, 5, 10]
    assert config.budgets == [1000, 2000]
    assert config.bootstrap.resamples == 500
    assert config.bootstrap.seed == 11
    assert [s.name for s in config.stages] == ["bm25", "minilm", "hybrid", "mine", "func", "file"]
    bm25 = config.stage("bm25")
    assert isinstance(bm25.retriever, Bm25Retriever)
    assert bm25.retriever.k1 == 1.2
    assert bm25.chunker == CharsChunker(size=800, overlap=100)  # the run's chunker
    assert config.stage("minilm").chunker == SentencesChunker(max_sentences=3)
    dense = config.stage("minilm").retriever
    assert isinstance(dense, DenseRetriever)
    assert dense.batch_size == 16
    command = config.stage("mine").retriever
    assert isinstance(command, CommandRetriever)
    assert command.cwd == base
    assert command.argv[2:] == ["{in}", "{out}"]
    func = config.stage("func").retriever
    assert isinstance(func, CallableRetriever)
    assert func.target == f"{base}/tools/search.py:search"
    predictions = config.stage("file").retriever
    assert isinstance(predictions, PredictionsRetriever)
    assert predictions.path == base / "runs/bm25.trec"
    assert predictions.resolved_format == "trec"
    assert config.stage("hybrid").chunker is None


def test_baseline_is_added_first_with_the_default_chunker() -> None:
    settings = EvalSettings(stages=[StageConfig(name="dense", retriever=DenseRetriever())])
    assert [s.name for s in settings.stages] == ["bm25", "dense"]
    assert settings.stages[0].chunker == CharsChunker(size=1000, overlap=200)
    assert settings.headline_metrics == ["recall@10", "ndcg@10", "mrr", "recall@2000c"]
    document = EvalSettings(level="document")
    assert document.stages[0].chunker == DocumentChunker()
    assert document.headline_metrics == ["ndcg@10", "recall@100", "mrr"]


def test_reserved_baseline_name() -> None:
    with pytest.raises(ValidationError, match="reserved for the BM25 baseline"):
        StageConfig(name="bm25", retriever=DenseRetriever())


def test_stage_rules() -> None:
    with pytest.raises(ValidationError, match="brings its own spans"):
        StageConfig(
            name="x",
            retriever=PredictionsRetriever(path=Path("p.jsonl")),
            chunker=CharsChunker(),
        )
    with pytest.raises(ValidationError, match="stage name"):
        StageConfig(name="Has Space", retriever=Bm25Retriever())
    with pytest.raises(ValidationError, match="unique"):
        EvalSettings(
            stages=[
                StageConfig(name="a", retriever=Bm25Retriever()),
                StageConfig(name="a", retriever=Bm25Retriever()),
            ]
        )
    with pytest.raises(ValidationError, match="not a stage defined before it"):
        EvalSettings.model_validate(
            {
                "stages": [
                    {"name": "h", "retriever": {"kind": "hybrid", "stages": ["bm25", "later"]}}
                ]
            }
        )
    with pytest.raises(ValidationError, match="no document-level meaning"):
        EvalSettings(level="document", headline_metrics=["recall@2000c"])
    with pytest.raises(ValidationError, match="target"):
        CallableRetriever(target="no-colon")


def test_stage_hash_is_canonical() -> None:
    one = StageConfig(name="d", retriever=DenseRetriever(batch_size=8))
    two = StageConfig.model_validate({"retriever": {"batch_size": 8, "kind": "dense"}, "name": "d"})
    assert stage_config_hash(one) == stage_config_hash(two)
    assert stage_config_hash(one) != stage_config_hash(
        StageConfig(name="d", retriever=DenseRetriever(batch_size=9))
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('corpus = "c"\n', "judgments: required key is missing"),
        ('corpus = "c"\njudgments = "j"\ndepht = 3\n', "depht: unknown key"),
        ('corpus = "c"\njudgments = "j"\ndepth = 0\n', "depth: Input should be greater than 0"),
        (
            'corpus = "c"\njudgments = "j"\n[[stages]]\nname = "x"\n'
            '[stages.retriever]\nkind = "dense"\nbatch_sise = 4\n',
            r"stages\[0\].retriever.batch_sise: unknown key",
        ),
        (
            'corpus = "c"\njudgments = "j"\n[[stages]]\nname = "x"\n'
            '[stages.retriever]\nkind = "sparse"\n',
            r"stages\[0\].retriever",
        ),
        ('corpus = "c"\njudgments = \n', ":2: invalid TOML"),
    ],
)
def test_toml_errors_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "run.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(HarnessError, match=message) as raised:
        load_run_config(path)
    assert str(raised.value).startswith(str(path))
    assert "\n" not in str(raised.value)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="config file not found"):
        load_run_config(tmp_path / "absent.toml")


def test_run_config_settings_drop_the_files() -> None:
    config = RunConfig(corpus=Path("c"), judgments=Path("j"), depth=7)
    settings = config.settings
    assert settings.depth == 7
    assert not hasattr(settings, "corpus")
    assert settings.stages == config.stages


def test_chunkers_in_text_form_and_every_problem_listed(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(
        'corpus = "c"\njudgments = "j"\nchunker = "paragraphs:800"\n'
        '[[stages]]\nname = "small"\nretriever = { kind = "bm25" }\nchunker = "chars:200:20"\n',
        encoding="utf-8",
    )
    config = load_run_config(path)
    assert config.chunker == ParagraphsChunker(max_chars=800)
    assert config.stage("small").chunker == CharsChunker(size=200, overlap=20)
    path.write_text(
        'corpus = "c"\njudgments = "j"\ndepth = 0\nchunker = "pages"\ncutoffs = "x"\n'
        '[[stages]]\nname = "Bad"\nretriever = { kind = "dense", batch_size = 0 }\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as raised:
        load_run_config(path)
    wheres = [problem.where for problem in raised.value.problems]
    assert wheres == [
        "stages[0].name",
        "stages[0].retriever.batch_size",
        "depth",
        "cutoffs",
        "chunker",
    ]
    message = str(raised.value)
    assert message.startswith(f"{path}: ")
    assert "more problem" not in message
    assert "chunker: chunker 'pages': unknown kind 'pages'" in message
    assert "\n" not in message


def test_settings_of_a_run_config_are_not_validated_again() -> None:
    config = RunConfig(corpus=Path("c"), judgments=Path("j"))
    settings = config.settings
    assert type(settings) is EvalSettings
    assert settings.stages[0] is config.stages[0]  # the same objects, no second validation
