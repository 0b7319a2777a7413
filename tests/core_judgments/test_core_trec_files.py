"""evaluate_trec_files (the vectorised file path) gives exactly the mapping path's figures."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from groundkit.judgments import JudgmentError, evaluate_trec, read_qrels, read_trec_run
from groundkit.judgments.trec import _file_eval as _trec_files
from groundkit.judgments.trec import evaluate_trec_files, format_trec_eval

OPTIONS = [
    {},
    {"all_queries": True},
    {"max_per_query": 3},
    {"max_per_query": 0, "all_queries": True},
    {"relevance_level": 2},
    {"relevance_level": 0},
]


def _score_text(rng: random.Random, value: float) -> str:
    form = rng.randrange(6)
    if form == 0:
        return repr(value)  # up to 17 digits: the one-by-one path
    if form == 1:
        return f"{value:.3e}"  # an exponent: the one-by-one path
    if form == 2:
        return f"{value:+.2f}"
    if form == 3:
        return f"{value:.0f}."
    return f"{value:.2f}"  # rounded: many ties


def _files(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    queries = [f"q{rng.randrange(10 ** rng.randrange(1, 4))}" for _ in range(40)]
    queries += ["a" * 19 + "x", "10", "9"]  # a two-word id; "10" sorts before "9"
    docs = [f"d{'x' * rng.randrange(0, 20)}{i}" for i in range(120)]
    qrels_lines = ["# a comment line", ""]
    run_lines = ["  # an indented comment", "\t"]
    for query in dict.fromkeys(queries):
        judged = rng.sample(docs, rng.randrange(0, 12))
        for doc in judged:
            level = rng.choice(["0", "1", "2", "3", "-1", "1.0", "+2", "12"])
            qrels_lines.append(f"{query}\t0 {doc}  {level}")
        if rng.random() < 0.15:
            continue  # judged, never retrieved
        ranked = rng.sample(docs, rng.randrange(1, 30))
        scores = [round(rng.uniform(-3, 3), 1) for _ in ranked]
        if rng.random() < 0.7:
            scores.sort(reverse=True)  # file order is usually score order
        for rank, (doc, score) in enumerate(zip(ranked, scores, strict=True), start=1):
            extra = " extra" if seed % 2 else ""  # trailing fields: only with extra_fields
            run_lines.append(f"{query} Q0 {doc} {rank} {_score_text(rng, score)} run{seed}{extra}")
    run_lines += [f"unjudged Q0 d{i} 1 {i} run{seed}" for i in range(3)]
    # Queries split over blocks, lines shuffled: the ranking is made from the scores alone.
    head, tail = run_lines[:2], run_lines[2:]
    if seed % 2:
        rng.shuffle(tail)
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("\n".join(qrels_lines) + "\n", encoding="ascii")
    run_path.write_text("\n".join(head + tail) + ("\n" if seed % 3 else ""), encoding="ascii")
    return qrels_path, run_path


def _mapping(
    qrels: Path, run: Path, measures: list[str], *, extra_fields: bool, **options: object
) -> str:
    result = evaluate_trec(
        read_qrels(qrels),
        read_trec_run(run, extra_fields=extra_fields),
        measures,
        **options,  # type: ignore[arg-type]
    )
    return format_trec_eval(result, per_query=True)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [64, 1 << 24])
def test_file_path_prints_what_the_mapping_path_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, chunk: int
) -> None:
    qrels, run = _files(tmp_path, seed)
    monkeypatch.setattr(_trec_files, "_CHUNK", chunk)  # small chunks: ids widen across chunks

    def _refuse(*_: object) -> None:
        raise AssertionError("the vectorised path fell back")

    for options in OPTIONS:
        for measures in (["official"], ["all_trec", "relstring.12"]):
            expected = _mapping(qrels, run, measures, extra_fields=bool(seed % 2), **options)
            with monkeypatch.context() as patch:
                patch.setattr(_trec_files, "read_qrels", _refuse)
                patch.setattr(_trec_files, "read_trec_run", _refuse)
                result = evaluate_trec_files(
                    qrels,
                    run,
                    measures,
                    extra_fields=bool(seed % 2),
                    **options,  # type: ignore[arg-type]
                )
            assert format_trec_eval(result, per_query=True) == expected
            assert result.run_id == f"run{seed}"


@pytest.mark.parametrize(
    ("qrels_text", "run_text", "fragment", "line"),
    [
        ("1 0 d1 1\n", "1 Q0 d1 1 1.0 r\n1 Q0 d2 2 0.5\n", "expected at least 6 fields", 2),
        ("1 0 d1 1\n", "1 Q0 d1 1 1.0 r\n1 Q0 d2 2 1..5 r\n", "is not a finite", 2),
        ("1 0 d1 1\n", "1 Q0 d1 1 nan r\n", "is not a finite", 1),
        ("1 0 d1 1\n", "1 Q0 d1 1 1 r\n2 Q0 d1 1 1 r\n1 Q0 d1 2 0 r\n", "retrieved twice", 3),
        ("1 0 d1 1\n1 0 d1 2\n", "1 Q0 d1 1 1 r\n", "judged twice", 2),
        ("1 0 d1 1e3\n", "1 Q0 d1 1 1 r\n", "is not a number", 1),
        ("1 0 d1 1\n1 0 d2\n", "1 Q0 d1 1 1 r\n", "expected 4 fields", 2),
    ],
)
def test_malformed_files_raise_the_readers_errors(
    tmp_path: Path, qrels_text: str, run_text: str, fragment: str, line: int
) -> None:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(qrels_text, encoding="ascii")
    run.write_text(run_text, encoding="ascii")
    with pytest.raises(JudgmentError) as info:
        evaluate_trec_files(qrels, run)
    assert fragment in str(info.value)
    assert info.value.line == line


def test_non_ascii_ids_and_empty_files_take_the_mapping_path(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("é 0 dé 1\né 0 d2 0\n", encoding="utf-8")
    run.write_text("é Q0 d2 1 1 r\né Q0 dé 2 1 r\n", encoding="utf-8")
    expected = _mapping(qrels, run, ["official"], extra_fields=False)
    assert format_trec_eval(evaluate_trec_files(qrels, run), per_query=True) == expected
    with pytest.raises(JudgmentError, match="unknown or unsupported"):
        evaluate_trec_files(qrels, run, ["nope"])
    run.write_text("", encoding="ascii")
    with pytest.raises(JudgmentError, match="no query has both"):
        evaluate_trec_files(qrels, run)
    with pytest.raises(JudgmentError, match="cannot read file"):
        evaluate_trec_files(qrels, tmp_path / "missing")


def test_every_value_equals_pytrec_eval_on_a_run_with_ties(tmp_path: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(7)
    qrels_lines, run_lines = [], []
    for q in range(60):
        docs = rng.choice(400, size=60, replace=False)
        for d in docs[rng.choice(60, size=15, replace=False)]:
            qrels_lines.append(f"{q} 0 d{d} {rng.integers(0, 4)}")
        for d in docs[rng.choice(60, size=5, replace=False)]:
            qrels_lines.append(f"{q} 0 x{d} {rng.integers(1, 4)}")  # judged, not retrieved
        scores = np.round(rng.random(50), 1)  # about five documents per score: many ties
        for rank, (d, s) in enumerate(zip(docs[:50], scores, strict=True), start=1):
            run_lines.append(f"{q} Q0 d{d} {rank} {s} r")
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("\n".join(qrels_lines) + "\n", encoding="ascii")
    run.write_text("\n".join(run_lines) + "\n", encoding="ascii")
    # Not iprec_at_recall: pytrec_eval takes the ceil(x * R)-th relevant where trec_eval rounds.
    measures = {
        "map",
        "ndcg",
        "ndcg_cut.5,10",
        "P.5,10",
        "recall.5,10",
        "recip_rank",
        "bpref",
        "Rprec",
        "set_P",
        "set_recall",
        "set_F",
        "success.1,5",
        "num_rel_ret",
        "map_cut.10",
    }  # fmt: skip
    ours = evaluate_trec_files(qrels, run, sorted(measures))
    with qrels.open() as f_qrels, run.open() as f_run:
        evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f_qrels), measures)
        reference = evaluator.evaluate(pytrec_eval.parse_run(f_run))
    assert set(reference) == set(ours.per_query)
    names = list(next(iter(reference.values())))
    for query, values in reference.items():
        for name in names:
            assert ours.per_query[query][name] == values[name], (query, name)
    for name in names:
        mean = pytrec_eval.compute_aggregated_measure(name, [v[name] for v in reference.values()])
        assert ours.summary[name] == pytest.approx(mean, rel=1e-12, abs=1e-15), name
