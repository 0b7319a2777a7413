"""Output-folder refusals, the path-escape barrier, and rollback of a failed write."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groundkit.adapters.beir import BeirError, adapt_beir_dataset
from groundkit.adapters.beir import _adapt as adapt_module
from groundkit.adapters.beir import _output as output_module
from groundkit.adapters.beir import _scan as scan_module
from groundkit.judgments import load_judgments
from groundkit.judgments.trec import IdMap, read_id_map

Tree = Callable[[Path], Any]


def refuse(tree: Tree, watched: list[Path], pattern: str, call: Callable[[], object]) -> None:
    before = [tree(path) for path in watched]
    with pytest.raises(BeirError, match=pattern) as caught:
        call()
    assert "\n" not in str(caught.value)
    assert [tree(path) for path in watched] == before


def test_output_path_is_a_file(make_beir: Callable[..., Path], tmp_path: Path, tree: Tree) -> None:
    out = tmp_path / "out"
    out.write_text("a file")
    refuse(
        tree,
        [out],
        "output path exists and is not a folder",
        lambda: adapt_beir_dataset(make_beir(), out),
    )


def test_output_parent_is_a_file(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    parent = tmp_path / "parent"
    parent.write_text("a file")
    refuse(
        tree,
        [parent],
        "cannot create the output folder: .* is not a folder",
        lambda: adapt_beir_dataset(make_beir(), parent / "out"),
    )


def test_non_empty_corpus_is_refused(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    out = tmp_path / "out"
    (out / "corpus").mkdir(parents=True)
    (out / "corpus" / "other-dataset.txt").write_text("another dataset")
    refuse(
        tree,
        [out],
        "corpus folder is not empty; .* mix two datasets",
        lambda: adapt_beir_dataset(make_beir(), out),
    )


def test_hidden_file_makes_corpus_non_empty(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    out = tmp_path / "out"
    (out / "corpus").mkdir(parents=True)
    (out / "corpus" / ".leftover.tmp").write_text("x")
    refuse(tree, [out], "not empty", lambda: adapt_beir_dataset(make_beir(), out))


def test_corpus_that_is_a_file(make_beir: Callable[..., Path], tmp_path: Path, tree: Tree) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "corpus").write_text("x")
    refuse(
        tree,
        [out],
        "corpus exists and is not a folder",
        lambda: adapt_beir_dataset(make_beir(), out),
    )


def test_judgments_path_is_a_folder(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    out = tmp_path / "out"
    (out / "judgments.jsonl").mkdir(parents=True)
    refuse(
        tree,
        [out],
        "judgments.jsonl exists and is a folder",
        lambda: adapt_beir_dataset(make_beir(), out),
    )


def test_corpus_symlink_to_elsewhere(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / "corpus").symlink_to(elsewhere, target_is_directory=True)
    refuse(
        tree,
        [out, elsewhere],
        "corpus is a symbolic link; refusing to write through it",
        lambda: adapt_beir_dataset(make_beir(), out),
    )


def test_corpus_symlink_inside_output_is_refused_too(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    out = tmp_path / "out"
    (out / "real").mkdir(parents=True)
    (out / "corpus").symlink_to(out / "real", target_is_directory=True)
    refuse(tree, [out], "corpus is a symbolic link", lambda: adapt_beir_dataset(make_beir(), out))


def test_existing_corpus_containing_escaping_symlink(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    out = tmp_path / "out"
    victim = tmp_path / "victim.txt"
    victim.write_text("must not be overwritten")
    (out / "corpus").mkdir(parents=True)
    (out / "corpus" / "d1.txt").symlink_to(victim)
    refuse(
        tree,
        [out, victim],
        "corpus folder is not empty",
        lambda: adapt_beir_dataset(make_beir(), out),
    )


@pytest.mark.parametrize("name", ["judgments.jsonl", "id_map.json"])
def test_file_slot_that_is_a_symlink(
    name: str, make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (out / name).symlink_to(victim)
    refuse(
        tree,
        [out, victim],
        f"{name} is a symbolic link; refusing to write through it",
        lambda: adapt_beir_dataset(make_beir(), out),
    )


def test_dangling_output_symlink(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    out = tmp_path / "out"
    out.symlink_to(tmp_path / "missing", target_is_directory=True)
    refuse(tree, [out], "broken symbolic link", lambda: adapt_beir_dataset(make_beir(), out))


def test_foreign_id_map_is_refused_without_force(
    make_beir: Callable[..., Path], tmp_path: Path
) -> None:
    # A map no adaptation wrote may be the user's own: it is kept unless they say --force.
    out = tmp_path / "out"
    out.mkdir()
    foreign = '{"documents": {"old": "stale"}, "queries": {}}'
    (out / "id_map.json").write_text(foreign)
    with pytest.raises(BeirError, match=r"id_map\.json is not from an earlier adaptation"):
        adapt_beir_dataset(make_beir(), out)
    assert (out / "id_map.json").read_text() == foreign
    assert sorted(p.name for p in out.iterdir()) == ["id_map.json"]


def test_leftover_id_map_is_replaced(make_beir: Callable[..., Path], tmp_path: Path) -> None:
    # Every adaptation writes its own map, so one left by an earlier run cannot go stale.
    out = tmp_path / "out"
    adapt_beir_dataset(make_beir(), out)
    (out / "id_map.json").write_text('{"documents": {"old": "stale"}, "queries": {}}')
    adapt_beir_dataset(make_beir(), out)  # the manifest says the folder is an adaptation
    assert read_id_map(out / "id_map.json") == IdMap(document_suffix=".txt")
    forced = tmp_path / "forced"
    forced.mkdir()
    (forced / "id_map.json").write_text('{"documents": {"old": "stale"}, "queries": {}}')
    adapt_beir_dataset(make_beir(), forced, force=True)
    assert read_id_map(forced / "id_map.json") == IdMap(document_suffix=".txt")


def test_output_folder_through_a_symlink_is_allowed(
    make_beir: Callable[..., Path], tmp_path: Path
) -> None:
    # The output folder itself may be a link chosen by the user; only its contents may not be.
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    adapt_beir_dataset(make_beir(), link)
    assert len(load_judgments(real / "judgments.jsonl")) == 3


def test_escape_barrier_catches_ids_that_slip_past_validation(
    make_beir: Callable[..., Path],
    beir_records: tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, str, int]]],
    tmp_path: Path,
    tree: Tree,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Disable the id checks: the resolved-path barrier alone must stop the escape.
    monkeypatch.setattr(adapt_module, "document_id_problem", lambda doc_id: None)
    documents, queries, qrels = beir_records
    documents.append({"_id": "../../escaped", "text": "outside"})
    source = make_beir(documents=documents, queries=queries, qrels=qrels)
    out = tmp_path / "out"
    refuse(
        tree,
        [out, tmp_path / "escaped.txt"],
        r"resolves to .*escaped\.txt, outside",
        lambda: adapt_beir_dataset(source, out),
    )
    assert not (tmp_path / "escaped.txt").exists()


def test_escape_barrier_catches_symlinked_corpus_past_the_output_checks(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Disable the output checks: resolving every target must still refuse the link.
    monkeypatch.setattr(adapt_module, "check_output", lambda layout, **_: None)
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / "corpus").symlink_to(elsewhere, target_is_directory=True)
    refuse(tree, [out, elsewhere], "outside", lambda: adapt_beir_dataset(make_beir(), out))


@pytest.mark.parametrize("existing", [False, True])
def test_failed_write_is_rolled_back(
    existing: bool,
    make_beir: Callable[..., Path],
    tmp_path: Path,
    tree: Tree,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "deep" / "out"
    if existing:
        (out / "corpus").mkdir(parents=True)
        (out / "keep.txt").write_text("user data")
    calls = 0

    real_write = output_module._write_file

    def failing_write(path: Path, data: bytes) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            try:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            except OSError as error:
                raise output_module.BeirError(
                    f"cannot write file: {error.strerror}", path=path
                ) from None
        real_write(path, data)

    monkeypatch.setattr(output_module, "_write_file", failing_write)
    refuse(
        tree,
        [tmp_path / "deep"],
        "cannot write file: No space left on device",
        lambda: adapt_beir_dataset(make_beir(), out),
    )
    assert calls >= 3


@pytest.mark.parametrize("kept", [True, False], ids=["texts-kept", "streamed-again"])
def test_corpus_changed_between_passes_is_rolled_back(
    make_beir: Callable[..., Path],
    tmp_path: Path,
    tree: Tree,
    monkeypatch: pytest.MonkeyPatch,
    kept: bool,
) -> None:
    # Both ways of pass 2: texts kept from pass 1 (the file hashed again), or read again.
    if not kept:
        monkeypatch.setattr(scan_module, "KEPT_CHARACTERS", 0)
    source = make_beir()
    out = tmp_path / "out"

    def tamper(done: int, total: int) -> None:
        if done == 0:  # after validation, before the second pass reads the corpus
            lines = (source / "corpus.jsonl").read_text().splitlines(keepends=True)
            record = json.loads(lines[2])
            record["text"] = "swapped after validation"
            lines[2] = json.dumps(record) + "\n"
            (source / "corpus.jsonl").write_text("".join(lines))

    refuse(
        tree,
        [out],
        "corpus file changed while it was being adapted",
        lambda: adapt_beir_dataset(source, out, progress=tamper),
    )


def test_interrupt_during_write_is_rolled_back(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    out = tmp_path / "out"
    before = tree(out)

    def interrupt(done: int, total: int) -> None:
        if done >= 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        adapt_beir_dataset(make_beir(), out, progress=interrupt)
    assert tree(out) == before


def test_kept_and_streamed_passes_write_the_same_files(
    make_beir: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = make_beir()
    kept = adapt_beir_dataset(source, tmp_path / "kept")
    monkeypatch.setattr(scan_module, "KEPT_CHARACTERS", 0)
    streamed = adapt_beir_dataset(source, tmp_path / "streamed")
    assert kept.document_count == streamed.document_count > 0

    def files(root: Path) -> dict[str, bytes]:
        return {
            os.fspath(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()
        }

    assert files(tmp_path / "kept") == files(tmp_path / "streamed")


def test_corpus_truncated_after_pass_one_is_refused(
    make_beir: Callable[..., Path], tmp_path: Path, tree: Tree
) -> None:
    source = make_beir()
    out = tmp_path / "out"

    def truncate(done: int, total: int) -> None:
        if done == 0:
            data = (source / "corpus.jsonl").read_bytes()
            (source / "corpus.jsonl").write_bytes(data[: len(data) // 2])

    refuse(
        tree,
        [out],
        "corpus file changed while it was being adapted",
        lambda: adapt_beir_dataset(source, out, progress=truncate),
    )
