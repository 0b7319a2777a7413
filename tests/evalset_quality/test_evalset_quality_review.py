from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.evalset import Decision, EvalSetError, ReviewQueue, set_version
from groundkit.judgments import Judgment

Make = Callable[..., Judgment]


def _current_id(queue: ReviewQueue) -> str | None:
    current = queue.current
    return None if current is None else current.query_id


def _current_qtype(queue: ReviewQueue) -> str | None:
    current = queue.current
    assert current is not None
    return current.qtype


def _items(make: Make) -> list[Judgment]:
    return [
        make("done", "Was this already reviewed by someone?", meta={"reviewed": True}),
        make("a", "What is the hotel cap in Berlin?", quote="Hotels: 180 euros"),
        make("b", "Who approves travel over budget?"),
        make("c", "Is there a policy on office pets?", quote=None),
        make("d", "How many sick days can staff take?"),
    ]


def test_full_lifecycle(make_judgment: Make) -> None:
    queue = ReviewQueue(_items(make_judgment))
    assert queue.progress().total == 4
    assert queue.current is not None
    assert queue.current.query_id == "a"
    queue.mark("numeric")
    assert queue.current.qtype == "numeric"
    assert queue.progress().done == 0
    queue.edit(quote="Hotels: 180 euros", grade=2, note="grade up")
    queue.reject("not what users ask")
    queue.skip()
    queue.accept()
    assert queue.finished
    assert _current_id(queue) is None
    assert str(queue.progress()) == "4/4"
    assert queue.counts() == {"accept": 1, "edit": 1, "reject": 1, "skip": 1, "pending": 0}
    assert [(r.query_id, r.reason) for r in queue.rejections()] == [("b", "not what users ask")]
    out = queue.result()
    assert [j.query_id for j in out] == ["done", "a", "d"]
    by_id = {j.query_id: j for j in out}
    assert by_id["a"].meta["verdict"] == "edit"
    assert by_id["a"].meta["reviewed"] is True
    assert by_id["a"].meta["review_note"] == "grade up"
    assert by_id["a"].gold[0].grade == 2
    assert by_id["a"].qtype == "numeric"
    assert by_id["a"].meta["qtype_source"] == "person"
    assert by_id["d"].meta["verdict"] == "accept"
    assert by_id["done"].meta.get("verdict") is None
    assert set_version(out) == 1


def test_acting_on_a_finished_queue_is_an_error(make_judgment: Make) -> None:
    queue = ReviewQueue([make_judgment("a", "What is the hotel cap in Berlin?")])
    queue.accept()
    for action in (queue.accept, queue.reject, queue.skip):
        with pytest.raises(EvalSetError, match="finished"):
            action()
    with pytest.raises(EvalSetError, match="finished"):
        queue.mark("numeric")
    queue.undo()
    assert queue.current is not None


def test_undo(make_judgment: Make) -> None:
    queue = ReviewQueue(_items(make_judgment))
    with pytest.raises(EvalSetError, match="nothing to undo"):
        queue.undo()
    queue.mark("numeric")
    queue.reject("bad")
    assert queue.undo().action == "reject"
    assert queue.current is not None
    assert queue.current.qtype == "numeric"
    assert queue.rejections() == []
    assert queue.undo().action == "mark"
    assert _current_qtype(queue) is None
    assert [d.action for d in queue.decisions] == ["mark", "reject", "undo", "undo"]


def test_edit_errors(make_judgment: Make) -> None:
    queue = ReviewQueue(_items(make_judgment))
    with pytest.raises(EvalSetError, match="at least one"):
        queue.edit()
    with pytest.raises(EvalSetError, match=r"a: .*query"):
        queue.edit(question="   ")
    queue.accept()
    queue.accept()
    assert queue.current is not None
    assert queue.current.query_id == "c"
    with pytest.raises(EvalSetError, match="c: has no gold quote to edit: reject it"):
        queue.edit(quote="something")
    queue.edit(question="Does the office allow pets at all?")
    assert queue.result()[3].query == "Does the office allow pets at all?"


def test_resume_from_decisions(make_judgment: Make) -> None:
    items = _items(make_judgment)
    first = ReviewQueue(items)
    first.accept()
    first.mark("factoid")
    first.reject("duplicate")
    first.undo()
    log = first.decisions
    serialised = [d.model_dump_json() for d in log]
    resumed = ReviewQueue(items, decisions=[Decision.model_validate_json(s) for s in serialised])
    assert resumed.current == first.current
    assert resumed.progress() == first.progress()
    resumed.skip()
    resumed.accept()
    resumed.accept()
    assert resumed.finished


def test_log_for_other_judgments_is_refused(make_judgment: Make) -> None:
    items = _items(make_judgment)
    with pytest.raises(EvalSetError, match="decision 1 does not fit"):
        ReviewQueue(items, decisions=[Decision(action="accept", query_id="zzz")])


_ACTIONS = st.lists(
    st.sampled_from(["accept", "reject", "skip", "mark", "undo", "edit"]), max_size=15
)


@settings(max_examples=100, deadline=None)
@given(_ACTIONS)
def test_replay_rebuilds_the_same_state(make_judgment: Make, actions: list[str]) -> None:
    items = _items(make_judgment)
    queue = ReviewQueue(items)
    for action in actions:
        try:
            if action == "mark":
                queue.mark("factoid")
            elif action == "edit":
                queue.edit(question="An edited question for the item?")
            else:
                getattr(queue, action)()
        except EvalSetError:
            continue
    replayed = ReviewQueue(items, decisions=queue.decisions)
    assert replayed.result() == queue.result()
    assert replayed.counts() == queue.counts()
    assert replayed.current == queue.current
    done = queue.counts()
    assert done["accept"] + done["edit"] + done["reject"] + done["skip"] == queue.progress().done


def test_an_edit_keeps_a_pin_for_the_same_text_and_drops_it_for_a_new_one() -> None:
    def pinned(query_id: str) -> Judgment:
        return Judgment.model_validate(
            {
                "query_id": query_id,
                "query": "What is the fee this year?",
                "gold": [{"doc": "fees.md", "quote": "The fee is 8 dollars.", "start": 47}],
            }
        )

    queue = ReviewQueue([pinned("same"), pinned("new")])
    queue.edit(grade=2)  # the text is unchanged: the pin still holds
    queue.edit(quote="The fee is 9 dollars.")  # another text: the old offset says nothing
    same, new = queue.result()
    assert (same.gold[0].grade, same.gold[0].start) == (2, 47)
    assert (new.gold[0].quote, new.gold[0].start) == ("The fee is 9 dollars.", None)
