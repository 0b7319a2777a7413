"""`grk evalset review --candidates LIST`: judged-relevant hits become gold quotes, resumably."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.evalset.judge import CANDIDATE_SOURCE_KEY
from groundkit.judgments import Corpus, load_judgments, load_report, resolve_judgments
from groundkit.judgments.report import hit_touches_gold

STAGE = "bm25-chars200"


@pytest.fixture(scope="module")
def adjudicated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo, adjudicated with a judge that finds each query's first unjudged hit relevant."""
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(
        cli, ["eval", "demo", "--no-dense", "--resamples", "200", "--out", str(out / "d")]
    )
    assert result.exit_code == 0, result.output
    report_path = out / "d" / "report.json"
    report = load_report(report_path)
    corpus = Corpus.load(report.run.corpus_source or "")
    queries = {q.query_id: q for q in report.queries if q.answerable}
    rows = []
    for result_ in report.stage(STAGE).queries[:6]:
        query = queries.get(result_.query_id)
        if query is None:
            continue
        unjudged = [h for h in result_.hits[:3] if not hit_touches_gold(h, query)]
        for i, hit in enumerate(unjudged):
            passage = corpus[hit.doc][hit.start : hit.end]
            rows.append(
                {"query": query.query, "passage": passage, "grades": [3] if i == 0 else [0]}
            )
    answers = out / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    listed = out / "list.jsonl"
    result = CliRunner().invoke(
        cli,
        ["eval", "adjudicate", str(report_path), "--stage", STAGE, "--k", "3", "--repeats", "1",
         "--judge", f"recorded:{answers}", "--out", str(out / "adj.json"), "--list", str(listed)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return {
        "list": listed,
        "judgments": Path(report.run.judgments_source or ""),
        "corpus": Path(report.run.corpus_source or ""),
    }


def _flagged(listed: Path) -> list[dict[str, object]]:
    rows = [json.loads(x) for x in listed.read_text().splitlines()]
    return [r for r in rows if r["possibly_missing_from_gold"]]


def _review(files: dict[str, Path], judgments: Path, out: Path, *extra: str, keys: str = ""):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(
        cli,
        ["evalset", "review", str(judgments), "--candidates", str(files["list"]),
         "--corpus", str(files["corpus"]), "--out", str(out), *extra],
        input=keys,
    )  # fmt: skip


def _copy(files: dict[str, Path], tmp: Path) -> Path:
    judgments = tmp / "gold.jsonl"
    judgments.write_bytes(files["judgments"].read_bytes())
    return judgments


def test_accept_all_adds_quotes_that_resolve(adjudicated: dict[str, Path], tmp_path: Path) -> None:
    judgments = _copy(adjudicated, tmp_path)
    before = judgments.read_bytes()
    flagged = _flagged(adjudicated["list"])
    assert flagged
    out = tmp_path / "more.jsonl"
    result = _review(adjudicated, judgments, out, "--accept-all-judged-relevant")
    assert result.exit_code == 0, result.output
    assert f"{len(flagged)} accepted as gold" in result.output
    assert judgments.read_bytes() == before  # the input is never replaced
    old = {j.query_id: j for j in load_judgments(judgments)}
    new = {j.query_id: j for j in load_judgments(out)}
    added = sum(len(new[q].gold) - len(old[q].gold) for q in old)
    assert added == len(flagged)
    for row in flagged:
        item = new[str(row["query_id"])]
        assert {"doc": row["doc"], "start": row["start"], "end": row["end"]} in item.meta[
            CANDIDATE_SOURCE_KEY
        ]
    # Every new quote resolves to the judged span in the corpus.
    resolved = resolve_judgments(list(new.values()), Corpus.load(adjudicated["corpus"]))
    spans = {
        (r.judgment.query_id, span.doc, span.start, span.end)
        for r in resolved
        for q in r.quotes
        for span in q.spans
    }
    for row in flagged:
        assert (row["query_id"], row["doc"], row["start"], row["end"]) in spans


def test_interactive_quit_then_resume_skips_decided(
    adjudicated: dict[str, Path], tmp_path: Path
) -> None:
    judgments = _copy(adjudicated, tmp_path)
    flagged = _flagged(adjudicated["list"])
    assert len(flagged) >= 3
    out = tmp_path / "more.jsonl"
    first = _review(adjudicated, judgments, out, keys="ar" + "q")
    assert first.exit_code == 0, first.output
    assert f"2/{len(flagged)} decided, 1 accepted as gold" in first.output
    assert "run the same command again to resume" in first.output
    journal = tmp_path / "more.candidates.jsonl"
    assert len(journal.read_text().splitlines()) == 3  # header + 2 decisions
    second = _review(adjudicated, judgments, out, keys="x" + "a" * len(flagged))
    assert second.exit_code == 0, second.output
    assert f"resuming: 2 of {len(flagged)} decided" in second.output
    assert f"[1/{len(flagged) - 2}]" in second.output  # only the undecided are shown
    assert "unknown key 'x'" in second.output
    assert f"{len(flagged)}/{len(flagged)} decided, {len(flagged) - 1} accepted" in second.output
    old = {j.query_id: j for j in load_judgments(judgments)}
    new = {j.query_id: j for j in load_judgments(out)}
    assert sum(len(new[q].gold) - len(old[q].gold) for q in old) == len(flagged) - 1
    # A torn last journal line (a kill mid-write) is dropped; the decisions before it stand.
    with journal.open("ab") as handle:
        handle.write(b'{"action": "acc')
    third = _review(adjudicated, judgments, out, keys="q")
    assert third.exit_code == 0, third.output
    assert f"resuming: {len(flagged)} of {len(flagged)} decided" in third.output


def _state(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"query_id": "x"}\n', "list.jsonl:1: not an adjudication list line"),
        ("not json\n", "list.jsonl:1: not a JSON object"),
    ],
)
def test_malformed_list_exit_2_nothing_written(
    adjudicated: dict[str, Path], tmp_path: Path, content: str, message: str
) -> None:
    judgments = _copy(adjudicated, tmp_path)
    listed = tmp_path / "list.jsonl"
    listed.write_text(content)
    files = {**adjudicated, "list": listed}
    before = _state(tmp_path)
    result = _review(files, judgments, tmp_path / "out.jsonl", "--accept-all-judged-relevant")
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert _state(tmp_path) == before


def test_other_corpus_or_output_over_input_refused(
    adjudicated: dict[str, Path], tmp_path: Path
) -> None:
    judgments = _copy(adjudicated, tmp_path)
    before = _state(tmp_path)
    result = _review(adjudicated, judgments, judgments, "--accept-all-judged-relevant")
    assert result.exit_code == 2, result.output
    assert _state(tmp_path) == before
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    flagged = _flagged(adjudicated["list"])
    text = "x" * 5000
    (corpus / f"{flagged[0]['doc']}").parent.mkdir(parents=True, exist_ok=True)
    (corpus / f"{flagged[0]['doc']}").write_text(text)
    before = _state(tmp_path)
    files = {**adjudicated, "corpus": corpus}
    result = _review(files, judgments, tmp_path / "out.jsonl", "--accept-all-judged-relevant")
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert _state(tmp_path) == before


def test_decisions_file_recorded_and_checked(adjudicated: dict[str, Path], tmp_path: Path) -> None:
    judgments = _copy(adjudicated, tmp_path)
    flagged = _flagged(adjudicated["list"])
    span = ("query_id", "doc", "start", "end")
    rows = [{"action": "accept", **{k: flagged[0][k] for k in span}}]
    rows.append({"action": "reject", **{k: flagged[1][k] for k in span}})
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "more.jsonl"
    result = _review(adjudicated, judgments, out, "--decisions", str(decisions))
    assert result.exit_code == 0, result.output
    assert f"2/{len(flagged)} decided, 1 accepted as gold" in result.output
    new = {j.query_id: j for j in load_judgments(out)}
    old = {j.query_id: j for j in load_judgments(judgments)}
    assert sum(len(new[q].gold) - len(old[q].gold) for q in old) == 1
    # A decision on a span that is no candidate: exit 2, nothing recorded or written.
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**rows[0], "start": 0, "end": 1}) + "\n")
    before = _state(tmp_path)
    result = _review(adjudicated, judgments, out, "--decisions", str(bad))
    assert result.exit_code == 2, result.output
    assert "not a candidate of the list" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert _state(tmp_path) == before
