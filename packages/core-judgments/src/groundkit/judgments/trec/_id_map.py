"""Id maps: how the ids of an original dataset became groundkit ids.

An adapter that renames ids (the BEIR adapter names every document ``<id>.txt`` and may slug
ids groundkit cannot use) records the renaming in ``id_map.json``, written in the folder that
holds the corpus folder. A tool that reads a run written on the original ids (Pyserini, ranx,
BEIR's own scripts) applies the map to score it without rewriting.

The file (UTF-8 JSON, one object)::

    {
        "document_suffix": ".txt",
        "documents": {"<dbpedia:Oceanic_Airlines>": "dbpedia-oceanic-airlines-3f2a9c1d"},
        "queries": {"PLAIN-2": "plain-2"},
    }

An original document id ``d`` is groundkit's ``documents.get(d, d) + document_suffix``; an
original query id ``q`` is ``queries.get(q, q)``. ``documents`` and ``queries`` list only the
ids that were renamed (both may be empty); ``document_suffix`` may be empty. No two original
ids of a kind may map to the same id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.files._paths import atomic_write_text
from groundkit.judgments.gold._io import read_json_file
from groundkit.judgments.gold._models import format_validation_error

__all__ = ["ID_MAP_FILE_NAME", "IdMap", "id_map_beside", "read_id_map", "write_id_map"]

#: The file name of an id map, in the folder that holds the corpus folder.
ID_MAP_FILE_NAME = "id_map.json"


def _repeated_value(mapping: Mapping[str, str]) -> tuple[str, str, str] | None:
    first: dict[str, str] = {}
    for original, new in mapping.items():
        earlier = first.setdefault(new, original)
        if earlier != original:
            return earlier, original, new
    return None


class IdMap(BaseModel):
    """Original ids to groundkit ids (see the module documentation for the file).

    Attributes:
        document_suffix: Appended to every document id, renamed or not (``".txt"``).
        documents: Original document id to its new id (without the suffix), renamed ids only.
        queries: Original query id to its new id, renamed ids only.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    document_suffix: str = ""
    documents: dict[str, str] = Field(default_factory=dict)
    queries: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_to_one(self) -> IdMap:
        for kind, mapping in (("document", self.documents), ("query", self.queries)):
            if any(not original or not new for original, new in mapping.items()):
                raise ValueError(f"{kind} ids must not be empty")
            repeated = _repeated_value(mapping)
            if repeated is not None:
                raise ValueError(
                    f"{kind} ids {repeated[0]!r} and {repeated[1]!r} both map to {repeated[2]!r}"
                )
        return self

    def document_id(self, original: str) -> str:
        """The groundkit id of an original document id."""
        return self.documents.get(original, original) + self.document_suffix

    def query_id(self, original: str) -> str:
        """The groundkit id of an original query id."""
        return self.queries.get(original, original)

    def originals(self) -> tuple[Callable[[str], str], Callable[[str], str]]:
        """The inverse maps: groundkit document id to original, query id to original.

        The document map raises :class:`JudgmentError` for an id that does not end with the
        map's ``document_suffix`` (not an id the map made).
        """
        documents = {new: original for original, new in self.documents.items()}
        queries = {new: original for original, new in self.queries.items()}
        suffix = self.document_suffix

        def document(new: str) -> str:
            if suffix and not new.endswith(suffix):
                raise JudgmentError(
                    f"document {new!r} does not end with the id map's suffix {suffix!r}: not "
                    "an id the map made"
                )
            stem = new[: len(new) - len(suffix)] if suffix else new
            return documents.get(stem, stem)

        def query(new: str) -> str:
            return queries.get(new, new)

        return document, query

    def to_json(self) -> str:
        """The file's text: sorted keys, two-space indent, non-ASCII kept, final newline."""
        return json.dumps(self.model_dump(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def read_id_map(path: str | Path) -> IdMap:
    """Read and check an id map file.

    Args:
        path: The ``id_map.json`` file.

    Returns:
        The map.

    Raises:
        JudgmentError: Unreadable file, invalid JSON, or not an id map (names the file).
    """
    data = read_json_file(path, what="id map")
    try:
        return IdMap.model_validate(data)
    except ValidationError as error:
        raise JudgmentError(
            f"not a groundkit id map: {format_validation_error(error)}", path=path
        ) from None


def write_id_map(id_map: IdMap, path: str | Path) -> None:
    """Write an id map atomically (see :meth:`IdMap.to_json` for the layout)."""
    atomic_write_text(Path(path), id_map.to_json())


def id_map_beside(corpus: str | Path | None) -> Path | None:
    """The id map recorded for a corpus folder: ``id_map.json`` in the folder holding it.

    Args:
        corpus: The corpus folder (``Corpus.source``), or ``None``.

    Returns:
        The file when ``corpus`` is a folder and the file exists, else ``None``.
    """
    if corpus is None:
        return None
    folder = Path(corpus)
    if not folder.is_dir():
        return None
    candidate = folder.absolute().parent / ID_MAP_FILE_NAME
    return candidate if candidate.is_file() else None
