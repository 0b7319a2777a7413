"""TREC runs on an original dataset's ids, read through the id map (grk beir adapt's layout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.harness import (
    EvalSettings,
    HarnessError,
    PredictionsRetriever,
    StageConfig,
    StageFailed,
    evaluate,
    load_run_config,
)
from groundkit.judgments import (
    Corpus,
    GoldQuote,
    Judgment,
    JudgmentError,
    StageReport,
    dump_judgments,
)
from groundkit.judgments.trec import IdMap, write_id_map

# An adapted dataset: documents named <original id>.txt, one id slugged, one query renamed.
TEXTS = {
    "1.txt": "Alpha particles are stopped by a sheet of paper.",
    "1-a.txt": "Beta particles are stopped by aluminium foil.",
    "doc-x.txt": "Gamma rays need lead shielding.",
    "7.txt": "Neutrons are slowed by water.",
}
ID_MAP = IdMap(document_suffix=".txt", documents={"DocX": "doc-x"}, queries={"Q-Gamma": "q-gamma"})
JUDGMENTS = [
    Judgment(
        query_id="q-alpha",
        query="What stops alpha particles?",
        gold=(GoldQuote(doc="1.txt", quote="stopped by a sheet of paper"),),
    ),
    Judgment(
        query_id="q-gamma",
        query="What stops gamma rays?",
        gold=(GoldQuote(doc="doc-x.txt", quote="lead shielding", grade=2),),
    ),
    Judgment(query_id="q-none", query="Who won the cup?", category="unanswerable"),
]


@pytest.fixture
def adapted(tmp_path: Path) -> Path:
    root = tmp_path / "adapted"
    (root / "corpus").mkdir(parents=True)
    for name, text in TEXTS.items():
        (root / "corpus" / name).write_text(text, encoding="utf-8")
    dump_judgments(JUDGMENTS, root / "judgments.jsonl")
    write_id_map(ID_MAP, root / "id_map.json")
    return root


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def _original_run(path: Path) -> Path:
    return _write(
        path,
        [
            "q-alpha Q0 7 1 3.0 orig",
            "q-alpha Q0 1 2 2.0 orig",
            "q-alpha Q0 1-a 3 2.0 orig",  # ties with 1: trec_eval puts 1-a first
            "Q-Gamma Q0 DocX 1 5.0 orig",
            "Q-Gamma Q0 1 2 1.0 orig",
            "q-none Q0 unknown-document 1 1.0 orig",  # unanswerable: ignored
        ],
    )


def _evaluate(root: Path, retriever: PredictionsRetriever, name: str = "run") -> StageReport:
    settings = EvalSettings(
        stages=[StageConfig(name=name, retriever=retriever)],
        level="document",
        bootstrap={"resamples": 50},
    )
    corpus = Corpus.from_directory(root / "corpus")
    return evaluate(corpus, JUDGMENTS, settings).stage(name)


def _docs(stage: StageReport, query_id: str) -> list[str]:
    return [h.doc for h in next(q for q in stage.queries if q.query_id == query_id).hits]


def test_original_ids_are_read_through_the_map_beside_the_corpus(
    adapted: Path, tmp_path: Path
) -> None:
    original = _evaluate(adapted, PredictionsRetriever(path=_original_run(tmp_path / "o.trec")))
    # The same run written with the corpus's own ids, ranked as trec_eval ranks the original.
    same = _write(
        tmp_path / "adapted.trec",
        [
            "q-alpha Q0 7.txt 1 3.0 a",
            "q-alpha Q0 1-a.txt 2 2.0 a",
            "q-alpha Q0 1.txt 3 1.5 a",
            "q-gamma Q0 doc-x.txt 1 5.0 a",
            "q-gamma Q0 1.txt 2 1.0 a",
        ],
    )
    adapted_ids = _evaluate(adapted, PredictionsRetriever(path=same))
    assert _docs(original, "q-alpha") == ["7.txt", "1-a.txt", "1.txt"]
    assert _docs(original, "q-gamma") == ["doc-x.txt", "1.txt"]
    assert [q.scores for q in original.queries] == [q.scores for q in adapted_ids.queries]
    assert original.queries[0].scores["mrr"] == pytest.approx(1 / 3)
    assert original.queries[1].scores["ndcg@10"] == 1.0


def test_an_explicit_id_map(adapted: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / "map.json"
    moved.parent.mkdir()
    (adapted / "id_map.json").rename(moved)
    run = _original_run(tmp_path / "o.trec")
    with pytest.raises(HarnessError, match="no id map given or found beside the corpus folder"):
        _evaluate(adapted, PredictionsRetriever(path=run))
    stage = _evaluate(adapted, PredictionsRetriever(path=run, id_map=moved))
    assert _docs(stage, "q-gamma") == ["doc-x.txt", "1.txt"]


def test_unknown_ids_name_the_stage_query_and_document(adapted: Path, tmp_path: Path) -> None:
    run = _write(tmp_path / "bad.trec", ["q-alpha Q0 7 1 3.0 x", "q-alpha Q0 zzz 2 2.0 x"])
    with pytest.raises(HarnessError) as caught:
        _evaluate(adapted, PredictionsRetriever(path=run), name="mine")
    message = str(caught.value)
    assert "\n" not in message
    assert message == (
        f"{run}: stage 'mine': query 'q-alpha': unknown document 'zzz' (not in the corpus, nor "
        f"'zzz.txt' through the id map {adapted.absolute() / 'id_map.json'})"
    )
    query = _write(tmp_path / "query.trec", ["Q-Nope Q0 7 1 3.0 x"])
    with pytest.raises(
        HarnessError, match=r"unknown query id 'Q-Nope' \(not in the judgments, nor"
    ):
        _evaluate(adapted, PredictionsRetriever(path=query))


def test_a_run_mixing_both_kinds_of_ids_is_refused(adapted: Path, tmp_path: Path) -> None:
    run = _write(tmp_path / "mixed.trec", ["q-alpha Q0 7.txt 1 3.0 x", "q-alpha Q0 1 2 2.0 x"])
    # Read as it is, '1' is unknown; through the map, '7.txt' is: one line names the problem of
    # the reading that knows more documents (a tie keeps the file's own ids).
    with pytest.raises(HarnessError, match=r"query 'q-alpha': unknown document '1' \(not in"):
        _evaluate(adapted, PredictionsRetriever(path=run))


def test_two_original_ids_that_become_one_are_refused(adapted: Path, tmp_path: Path) -> None:
    run = _write(tmp_path / "twice.trec", ["q-gamma Q0 Doc-Y 1 3.0 x", "q-gamma Q0 doc-x 2 2.0 x"])
    write_id_map(
        ID_MAP.model_copy(update={"documents": {"Doc-Y": "doc-x"}}), adapted / "id_map.json"
    )
    with pytest.raises(HarnessError, match="two documents are the same document through the id"):
        _evaluate(adapted, PredictionsRetriever(path=run))


def test_a_broken_id_map_is_named(adapted: Path, tmp_path: Path) -> None:
    (adapted / "id_map.json").write_text("{not json", encoding="utf-8")
    run = _write(tmp_path / "o.trec", ["q-alpha Q0 7 1 3.0 x"])
    with pytest.raises(JudgmentError, match=r"id_map\.json:1: not JSON") as caught:
        _evaluate(adapted, PredictionsRetriever(path=run))
    # Bad input (exit 2), not a failed stage.
    assert isinstance(caught.value, HarnessError)
    assert not isinstance(caught.value, StageFailed)
    # A run already on the corpus's ids never reads the map.
    fine = _write(tmp_path / "fine.trec", ["q-alpha Q0 7.txt 1 3.0 x"])
    assert _docs(_evaluate(adapted, PredictionsRetriever(path=fine)), "q-alpha") == ["7.txt"]


def test_a_malformed_run_line_is_bad_input(adapted: Path, tmp_path: Path) -> None:
    run = _write(tmp_path / "short.trec", ["q-alpha Q0 7"])
    with pytest.raises(HarnessError, match=r"short\.trec:1: expected at least 6 fields") as caught:
        _evaluate(adapted, PredictionsRetriever(path=run))
    assert not isinstance(caught.value, StageFailed)
    result = CliRunner().invoke(
        cli,
        [
            "eval", "run", "--corpus", str(adapted / "corpus"), "--judgments",
            str(adapted / "judgments.jsonl"), "--predictions", f"p={run}", "--report",
            str(tmp_path / "r.json"),
        ],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.output == (
        f"error: {run}:1: expected at least 6 fields (query iteration document rank score "
        "run_id), got 3\n"
    )
    assert not (tmp_path / "r.json").exists()


def test_id_map_is_for_trec_runs_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="id_map applies to TREC run files"):
        PredictionsRetriever(path=tmp_path / "p.jsonl", id_map=tmp_path / "id_map.json")


def test_toml_id_map_is_relative_to_the_config_file(adapted: Path, tmp_path: Path) -> None:
    config = tmp_path / "groundkit.toml"
    config.write_text(
        'corpus = "adapted/corpus"\njudgments = "adapted/judgments.jsonl"\n'
        '[[stages]]\nname = "orig"\n'
        'retriever = { kind = "predictions", path = "o.trec", id_map = "maps/id_map.json" }\n',
        encoding="utf-8",
    )
    retriever = load_run_config(config).stage("orig").retriever
    assert isinstance(retriever, PredictionsRetriever)
    assert retriever.id_map == tmp_path.resolve() / "maps" / "id_map.json"


def test_cli_finds_the_map_and_takes_an_id_map_flag(adapted: Path, tmp_path: Path) -> None:
    run = _original_run(tmp_path / "o.trec")
    base = [
        "eval", "run", "--corpus", str(adapted / "corpus"), "--judgments",
        str(adapted / "judgments.jsonl"), "--level", "document", "--resamples", "50",
        "--no-items",
    ]  # fmt: skip
    found = CliRunner().invoke(
        cli, [*base, "--predictions", f"orig={run}", "--report", str(tmp_path / "a.json")]
    )
    assert found.exit_code == 0, found.output
    moved = tmp_path / "map.json"
    (adapted / "id_map.json").rename(moved)
    flagged = CliRunner().invoke(
        cli,
        [
            *base,
            "--predictions",
            f"orig={run}",
            "--id-map",
            f"orig={moved}",
            "--report",
            str(tmp_path / "b.json"),
        ],
    )
    assert flagged.exit_code == 0, flagged.output
    first = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))["stages"][1]
    second = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["stages"][1]
    assert first["queries"] == second["queries"]
    assert second["retriever"]["id_map"] == str(moved)

    missing = CliRunner().invoke(cli, [*base, "--predictions", f"orig={run}"])
    assert missing.exit_code == 2
    assert missing.output.count("\n") == 1
    assert "stage 'orig': query 'q-alpha': unknown document '7'" in missing.output
    wrong = CliRunner().invoke(cli, [*base, "--predictions", f"orig={run}", "--id-map", "x=m.json"])
    assert wrong.exit_code == 2
    assert "--id-map 'x=m.json': no predictions stage named 'x'" in wrong.output
