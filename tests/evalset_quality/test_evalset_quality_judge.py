"""RelevanceJudge: prompt and reply parsing, majority of repeats, failures, the on-disk cache."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundkit.evalset import EvalSetError, RecordedJudge, RelevanceJudge, callable_judge
from groundkit.evalset.judge import (
    PROMPT_VERSION,
    Grade,
    JudgeCallError,
    JudgeReply,
    JudgeReplyError,
    JudgeRequest,
    JudgingFailedError,
    judge_prompt,
    majority_grade,
    parse_reply,
    passage_hash,
)
from groundkit.judgments import RunFailure


def test_prompt_carries_the_pair_and_the_scale() -> None:
    prompt = judge_prompt("  Who wrote it? ", "Ann wrote it.")
    assert "Question:\nWho wrote it?\n" in prompt
    assert "Passage:\nAnn wrote it.\n" in prompt
    for grade in ("0 - irrelevant", "1 - related", "2 - partly answers", "3 - answers"):
        assert grade in prompt
    assert PROMPT_VERSION


@pytest.mark.parametrize(
    ("reply", "grade", "reason"),
    [
        ('{"grade": 3, "reason": "It says so."}', Grade.ANSWERS, "It says so."),
        ('Sure!\n```json\n{"grade": 0}\n```', Grade.IRRELEVANT, ""),
        ('{"grade": 2, "reason": "  two\n lines "}', Grade.PARTLY_ANSWERS, "two lines"),
    ],
)
def test_parse_reply_reads_the_object(reply: str, grade: Grade, reason: str) -> None:
    assert parse_reply(reply) == (grade, reason)


@pytest.mark.parametrize(
    "reply", ["no json here", '{"grade": 4}', '{"grade": "3"}', '{"grade": true}', "{bad"]
)
def test_parse_reply_refuses_a_reply_without_a_grade(reply: str) -> None:
    with pytest.raises(JudgeReplyError):
        parse_reply(reply)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=9), st.integers(0, 4))
def test_majority_is_at_least_t_exactly_when_more_than_half_are(
    grades: list[int], threshold: int
) -> None:
    majority = majority_grade(grades)
    assert majority is not None
    above = sum(1 for g in grades if g >= threshold)
    assert (majority >= threshold) == (above * 2 > len(grades))


def test_majority_hand_values() -> None:
    assert majority_grade([]) is None
    assert majority_grade([3, 0, 3]) == 3
    assert majority_grade([1, 2, 3]) == 2
    assert majority_grade([3, 1]) == 1


def _scripted(
    replies: dict[int, str | Exception],
) -> tuple[list[JudgeRequest], Callable[[JudgeRequest], JudgeReply]]:
    seen: list[JudgeRequest] = []

    def client(request: JudgeRequest) -> JudgeReply:
        seen.append(request)
        reply = replies[request.repeat]
        if isinstance(reply, Exception):
            raise reply
        return JudgeReply(reply, tokens=10)

    return seen, client


def test_majority_of_repeats_and_a_failed_call_counts_neither_way(tmp_path: Path) -> None:
    _, client = _scripted(
        {0: '{"grade": 3, "reason": "yes"}', 1: JudgeCallError("HTTP 500"), 2: "garbage"}
    )
    judge = RelevanceJudge(client, model="m", cache=tmp_path / "cache.jsonl")
    run = judge.judge([("q", "passage")])
    verdict = run.verdicts[0]
    assert verdict.grades == [3]
    assert verdict.majority == 3
    assert verdict.relevant() is True
    assert len(verdict.failures) == 2
    assert "HTTP 500" in verdict.failures[0]
    assert "no JSON object" in verdict.failures[1]
    assert run.usage.calls == 3
    assert run.usage.failed == 2
    assert run.usage.tokens == 20  # the raised call reported none
    assert verdict.passage_hash == passage_hash("passage")


def test_rerun_calls_only_what_is_not_cached(tmp_path: Path) -> None:
    cache = tmp_path / "cache.jsonl"
    seen, client = _scripted({0: '{"grade": 1}', 1: JudgeCallError("timeout"), 2: '{"grade": 1}'})
    RelevanceJudge(client, model="m", cache=cache).judge([("q", "p"), ("q", "p")])
    assert len(seen) == 3  # the duplicate pair is judged once
    assert len(cache.read_text().splitlines()) == 2  # the failure is not cached
    again = RelevanceJudge(client, model="m", cache=cache).judge([("q", "p")])
    assert [r.repeat for r in seen[3:]] == [1]
    assert again.usage.calls == 1
    assert again.usage.cached == 2
    other_model = RelevanceJudge(client, model="m2", cache=cache).judge([("q", "p")])
    assert other_model.usage.cached == 0


def test_torn_last_line_is_redone_and_a_foreign_file_refused(tmp_path: Path) -> None:
    cache = tmp_path / "cache.jsonl"
    judge = RelevanceJudge(callable_judge(lambda q, p: 2), model="f", cache=cache, repeats=2)
    judge.judge([("q", "p")])
    lines = cache.read_text().splitlines()
    kept, torn = (json.loads(line)["repeat"] for line in lines)  # calls run concurrently
    cache.write_text(lines[0] + "\n" + lines[1][:20])
    rerun = RelevanceJudge(callable_judge(lambda q, p: 2), model="f", cache=cache, repeats=2)
    result = rerun.judge([("q", "p")])
    assert result.usage.calls == 1
    assert result.verdicts[0].grades == [2, 2]
    rows = cache.read_text().splitlines()
    assert len(rows) == 3  # the torn line stays in its own line; the redone call follows it
    assert [json.loads(rows[i])["repeat"] for i in (0, 2)] == [kept, torn]
    assert {kept, torn} == {0, 1}
    third = RelevanceJudge(callable_judge(lambda q, p: 2), model="f", cache=cache, repeats=2)
    assert third.judge([("q", "p")]).usage.calls == 0
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"a": 1}\n{"b": 2}\n')
    with pytest.raises(EvalSetError, match="line 1 is not a judge-cache line"):
        RelevanceJudge(callable_judge(lambda q, p: 2), model="f", cache=foreign)


def test_concurrency_bound_holds() -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}
    gate = threading.Event()

    def client(request: JudgeRequest) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        gate.wait(0.05)
        with lock:
            state["now"] -= 1
        return '{"grade": 0}'

    pairs = [("q", f"passage {i}") for i in range(12)]
    RelevanceJudge(client, model="m", concurrency=3).judge(pairs)
    assert state["peak"] == 3


def test_other_exceptions_stop_the_run_and_finished_calls_stay(tmp_path: Path) -> None:
    cache = tmp_path / "cache.jsonl"

    def client(request: JudgeRequest) -> str:
        if request.passage == "boom":
            raise ConnectionRefusedError("refused")
        return '{"grade": 3}'

    judge = RelevanceJudge(client, model="m", cache=cache, repeats=1, concurrency=1)
    with pytest.raises(ConnectionRefusedError):
        judge.judge([("q", "fine"), ("q", "boom")])
    assert len(cache.read_text().splitlines()) == 1


def test_callable_and_recorded_clients(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        json.dumps({"query": "q", "passage": "p", "grades": [3, 2, 0], "reason": "r"})
        + "\n"
        + json.dumps({"query": "q", "passage_sha256": passage_hash("x"), "grade": 1})
        + "\n"
    )
    recorded = RecordedJudge.from_file(answers)
    run = RelevanceJudge(recorded, model="rec").judge([("q", "p"), ("q", "x"), ("q", "y")])
    assert [v.grades for v in run.verdicts] == [[3, 2, 0], [1, 1, 1], []]
    assert run.verdicts[0].majority == 2
    assert run.verdicts[2].majority is None
    assert "no recorded answer" in run.verdicts[2].failures[0]
    tuple_judge = callable_judge(lambda q, p: (3, "because"))
    assert RelevanceJudge(tuple_judge, model="t", repeats=1).judge([("q", "p")]).verdicts[
        0
    ].reasons == ["because"]
    bad = callable_judge(lambda q, p: 7)
    lenient = RelevanceJudge(bad, model="b", repeats=1, min_decided=0.0)
    assert lenient.judge([("q", "p")]).usage.failed == 1
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"query": "q", "passage": "p", "grade": 5}\n')
    with pytest.raises(EvalSetError, match="line 1 is not a recorded answer"):
        RecordedJudge.from_file(broken)


@pytest.mark.parametrize(("repeats", "concurrency"), [(0, 1), (1, 0)])
def test_bad_settings(repeats: int, concurrency: int) -> None:
    with pytest.raises(EvalSetError):
        RelevanceJudge(
            callable_judge(lambda q, p: 1), model="m", repeats=repeats, concurrency=concurrency
        )


def _raises(query: str, passage: str) -> int:
    raise ValueError("model down")


def _exits(query: str, passage: str) -> int:
    raise SystemExit(3)


@pytest.mark.parametrize(
    ("function", "message"),
    [(_raises, "judge function raised ValueError: model down"), (_exits, "sys.exit(3)")],
)
def test_a_judge_function_that_raises_or_exits_fails_its_calls(
    tmp_path: Path, function: Callable[[str, str], int], message: str
) -> None:
    # The user's function is user code: its exception (or sys.exit) fails that call, listed,
    # never the process (it was "internal error" for an exception, a silent exit 3 for exit).
    judge = RelevanceJudge(
        callable_judge(function), model="f", cache=tmp_path / "c.jsonl", min_decided=0.0
    )
    run = judge.judge([("q", "p1"), ("q", "p2")])
    assert [v.majority for v in run.verdicts] == [None, None]
    assert all(message in failure for v in run.verdicts for failure in v.failures)
    assert run.usage.failed == 2 * judge.repeats


def test_a_run_that_decided_too_little_fails_naming_the_commonest_cause(tmp_path: Path) -> None:
    # Every call failing is not a result: the run raises (exit 1 on the CLI) with the cause.
    def down(query: str, passage: str) -> int:
        raise JudgeCallError("HTTP 401: invalid key")

    judge = RelevanceJudge(callable_judge(down), model="f", cache=tmp_path / "c.jsonl")
    with pytest.raises(JudgingFailedError, match=r"decided 0 of 2 pairs, 1 needed") as raised:
        judge.judge([("q", "p1"), ("q", "p2")])
    assert "commonest failure (6 of 6 failed calls)" in str(raised.value)
    assert "HTTP 401: invalid key" in str(raised.value)
    assert isinstance(raised.value, RunFailure)

    def half(query: str, passage: str) -> int:
        if passage.endswith("odd"):
            raise JudgeCallError("timed out")
        return 2

    pairs = [("q", f"p{i} {'odd' if i % 2 else 'even'}") for i in range(10)]
    assert RelevanceJudge(callable_judge(half), model="h").judge(pairs).usage.failed == 15
    assert RelevanceJudge(callable_judge(half), model="h", min_decided=0.5).judge(pairs)
    with pytest.raises(JudgingFailedError, match="decided 5 of 10 pairs, 6 needed"):
        RelevanceJudge(callable_judge(half), model="h", min_decided=0.6).judge(pairs)
    assert RelevanceJudge(callable_judge(half), model="h").judge([]).verdicts == []
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(EvalSetError, match="min_decided must be a share"):
            RelevanceJudge(callable_judge(half), model="h", min_decided=bad)
