"""The output guard, for every command that writes: no output replaces an input or a stranger.

Each writing command is given output paths that are one of its inputs, inside the corpus,
another of its outputs, a foreign file (replaced only with --force), a missing folder, a
folder or a pipe in the way, or a name longer than the file system allows. Each must be
refused before any work, naming both paths where two are involved, with every file as it was.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.integration.hostile.conftest import FAST, Dataset, Tally, check_case, make_dataset


@dataclass
class Setup:
    """One writing command: its arguments given an output path, and its inputs."""

    args: Callable[[Dataset, Path, Path], list[str | Path]]
    inputs: Callable[[Dataset, Path], list[tuple[str, Path]]]
    own: Callable[[Path], None]  # writes a file of the command's own kind at a path


def _report(path: Path, old_run: Path) -> None:
    shutil.copy(old_run / "run.json", path)


def _items(path: Path, old_run: Path) -> None:
    shutil.copy(old_run / "run.items.jsonl", path)


def _html(path: Path, old_run: Path) -> None:
    shutil.copy(old_run / "run.html", path)


def _judgments(path: Path) -> None:
    path.write_text('{"query_id": "old", "query": "Old?", "gold": [], "category": '
                    '"unanswerable"}\n', encoding="utf-8")  # fmt: skip


# The outputs of each command: flag -> (how to build its argv with that output, the kind)
@pytest.fixture
def work(tmp_path: Path, old_run: Path) -> tuple[Dataset, Path, Path]:
    data = make_dataset(tmp_path / "data")
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(old_run / "run.json", out / "in.json")
    shutil.copy(old_run / "run.items.jsonl", out / "a.items.jsonl")
    shutil.copy(old_run / "run.items.jsonl", out / "b.items.jsonl")
    return data, out, old_run


def _eval_run(flag: str) -> Callable[[Dataset, Path, Path], list[str | Path]]:
    def build(d: Dataset, out: Path, target: Path) -> list[str | Path]:
        paths = {
            "--report": out / "r.json",
            "--items": out / "r.items.jsonl",
            "--html": out / "r.html",
        }
        paths[flag] = target
        flags = [part for key, value in paths.items() for part in (key, value)]
        return ["eval", "run", "--corpus", d.corpus, "--judgments", d.judgments, *flags, *FAST]

    return build


COMMANDS: dict[str, tuple[Callable[[Dataset, Path, Path], list[str | Path]], str]] = {
    "eval run --report": (_eval_run("--report"), "report"),
    "eval run --items": (_eval_run("--items"), "items"),
    "eval run --html": (_eval_run("--html"), "html"),
    "eval report --html": (
        lambda d, out, t: ["eval", "report", out / "in.json", "--html", t], "html"
    ),
    "eval diagnose --track-record": (
        lambda d, out, t: ["eval", "diagnose", out / "in.json", "--track-record", t],
        "record",
    ),
    "eval compare --track-record": (
        lambda d, out, t: ["eval", "compare", out / "a.items.jsonl", out / "b.items.jsonl",
                           "--track-record", t],
        "record",
    ),
    "evalset filter -o": (
        lambda d, out, t: ["evalset", "filter", d.judgments, "-o", t], "judgments"
    ),
    "evalset filter --rejected": (
        lambda d, out, t: [
            "evalset", "filter", d.judgments, "-o", out / "k.jsonl", "--rejected", t,
        ],
        "rejections",
    ),
    "evalset classify -o": (
        lambda d, out, t: ["evalset", "classify", d.judgments, "-o", t],
        "judgments",
    ),
    "evalset review -o": (
        lambda d, out, t: ["evalset", "review", d.judgments, "-o", t], "judgments"
    ),
}  # fmt: skip


def _inputs(data: Dataset, out: Path) -> list[Path]:
    return [
        data.judgments,
        data.corpus,
        out / "in.json",
        out / "a.items.jsonl",
        out / "b.items.jsonl",
    ]


def _input_for(command: str, data: Dataset, out: Path) -> tuple[Path, str]:
    if command.startswith("eval run"):
        return data.judgments, "--judgments"
    if command.startswith(("eval report", "eval diagnose")):
        return out / "in.json", "in.json"
    if command.startswith("eval compare"):
        return out / "a.items.jsonl", "a.items.jsonl"
    return data.judgments, "JUDGMENTS"


BAD_TARGETS = [
    "an input",
    "a link to an input",
    "a hard link to an input",
    "inside the corpus",
    "the corpus folder",
    "a missing folder",
    "a folder",
    "a pipe",
    "a 300-character name",
    "a foreign file",
]


@pytest.mark.parametrize("target_kind", BAD_TARGETS)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_output_is_refused_before_any_work(
    command: str, target_kind: str, work: tuple[Dataset, Path, Path], tally: Tally
) -> None:
    data, out, _ = work
    build, _ = COMMANDS[command]
    source, source_label = _input_for(command, data, out)
    places: list[str] = []
    if target_kind == "an input":
        target = source
        places = ["same file as", source_label]
    elif target_kind == "a link to an input":
        target = out / "link.out"
        target.symlink_to(source)
        places = ["same file as", source_label]
    elif target_kind == "a hard link to an input":
        target = out / "hard.out"
        os.link(source, target)
        places = ["same file as", source_label]
    elif target_kind == "inside the corpus":
        if not command.startswith("eval run") and not command.startswith("evalset filter"):
            pytest.skip("this command reads no corpus")
        target = data.corpus / "out.json"
        places = ["inside the input folder", "corpus"]
        if command.startswith("evalset filter"):
            pytest.skip("filter reads a corpus only with --corpus")
    elif target_kind == "the corpus folder":
        target = data.corpus
        places = [str(data.corpus)]
    elif target_kind == "a missing folder":
        target = out / "no" / "such" / "dir" / "out.jsonl"
        places = ["does not exist"]
    elif target_kind == "a folder":
        target = out / "taken"
        target.mkdir()
        places = ["taken"]  # click says "directory", the guard "folder"
    elif target_kind == "a pipe":
        target = out / "pipe.out"
        os.mkfifo(target)
        places = ["not a regular file"]
    elif target_kind == "a 300-character name":
        target = out / ("x" * 300 + ".out")
        places = ["bytes long"]
    else:
        target = out / "notes.txt"
        target.write_text("My own notes, not groundkit's.\n", encoding="utf-8")
        places = ["not a groundkit", "--force"]
    check_case(
        tally,
        "outputs",
        build(data, out, target),
        inputs=_inputs(data, out),
        outputs=[target] if target_kind not in ("a folder", "the corpus folder") else [],
        place=places,
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_foreign_file_is_replaced_with_force(
    command: str, work: tuple[Dataset, Path, Path], tally: Tally
) -> None:
    data, out, _ = work
    build, _ = COMMANDS[command]
    target = out / "notes.txt"
    target.write_text("My own notes.\n", encoding="utf-8")
    args = [*build(data, out, target), "--force"]
    if command == "evalset review -o":
        return _review_forced(data, out, target, tally)
    check_case(tally, "outputs", args, inputs=_inputs(data, out), exit_code=0)
    if COMMANDS[command][1] != "record":  # compare appends only when it has a prediction
        assert target.read_bytes() != b"My own notes.\n"
    return None


def _review_forced(data: Dataset, out: Path, target: Path, tally: Tally) -> None:
    from tests.integration.hostile.conftest import grk

    check_case(
        tally,
        "outputs",
        ["evalset", "review", data.judgments, "-o", target, "--force"],
        inputs=_inputs(data, out),
        exit_code=0,
        run=lambda *a: grk(*a, input="aaaa"),
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_own_kind_is_replaced_without_force(
    command: str, work: tuple[Dataset, Path, Path], tally: Tally
) -> None:
    data, out, old_run = work
    build, kind = COMMANDS[command]
    target = out / "previous.out"
    if kind == "report":
        _report(target, old_run)
    elif kind == "items":
        _items(target, old_run)
    elif kind == "html":
        _html(target, old_run)
    elif kind == "record":
        target.write_text("", encoding="utf-8")
    else:
        _judgments(target) if kind == "judgments" else target.write_text(
            json.dumps({"filter": "too-short", "query_id": "x", "reason": "r"}) + "\n"
        )
    args = build(data, out, target)
    from tests.integration.hostile.conftest import grk

    check_case(
        tally,
        "outputs",
        args,
        inputs=_inputs(data, out),
        exit_code=0,
        run=(lambda *a: grk(*a, input="aaaa")) if command == "evalset review -o" else grk,
    )


@pytest.mark.parametrize(
    "pair", [("--report", "--items"), ("--report", "--html"), ("--items", "--html")]
)
def test_two_outputs_on_one_file_are_refused(
    pair: tuple[str, str], work: tuple[Dataset, Path, Path], tally: Tally
) -> None:
    data, out, _ = work
    same = out / "same.out"
    args: list[str | Path] = ["eval", "run", "--corpus", data.corpus, "--judgments", data.judgments]
    paths = {"--report": out / "r.json", "--items": out / "r.items.jsonl", "--html": out / "r.html"}
    paths[pair[0]] = same
    paths[pair[1]] = same
    for flag, path in paths.items():
        args += [flag, path]
    check_case(
        tally, "outputs", [*args, *FAST], inputs=_inputs(data, out), outputs=[same],
        place=["same file as", pair[0]],
    )  # fmt: skip


def test_filter_out_and_rejected_on_the_input(
    work: tuple[Dataset, Path, Path], tally: Tally
) -> None:
    data, out, _ = work
    check_case(
        tally, "outputs",
        ["evalset", "filter", data.judgments, "-o", out / "kept.jsonl",
         "--rejected", data.judgments],
        inputs=_inputs(data, out), outputs=[out / "kept.jsonl"],
        place=["--rejected", "same file as JUDGMENTS"],
    )  # fmt: skip


def test_corpus_jsonl_as_report(work: tuple[Dataset, Path, Path], tally: Tally) -> None:
    data, _out, _ = work
    corpus = data.root / "corpus.jsonl"
    corpus.write_text('{"id": "a.md", "text": "The refund window is thirty days."}\n')
    check_case(
        tally, "outputs",
        ["eval", "run", "--corpus", corpus, "--judgments", data.judgments,
         "--report", corpus, *FAST],
        inputs=[corpus, data.judgments], place=["same file as --corpus"],
    )  # fmt: skip


def test_demo_out_that_is_a_file(tmp_path: Path, tally: Tally) -> None:
    taken = tmp_path / "demo"
    taken.write_text("a file")
    check_case(
        tally, "outputs", ["eval", "demo", "--out", taken, "--no-dense", *FAST],
        outputs=[taken], place=["--out", "demo"],
    )  # fmt: skip
