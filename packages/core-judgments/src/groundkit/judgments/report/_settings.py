"""A report stage's settings, typed: the chunker by core's config model, the retriever as a record.

The chunker is a :data:`~groundkit.judgments.ChunkerConfig` (schema 2.1; a plain mapping
before). A mapping read from a file is validated by it, so a partial mapping from an older
report gets the model's defaults, the values its run used (the defaults have not changed
since 1.0). It also keeps which keys it gave: :func:`chunker_record` is the chunker as the
report recorded it, what the file is written with and what every hash over a stage's settings
reads (the items ``config_hash``, the diagnosis ``config_hash``), so an older report's hashes
do not move. A config object given in Python is recorded in full, as the harness writes it.

The run's tokenizer (whose tokens the ``tokens`` chunker and ``max_tokens`` limits count) is
recorded as a :class:`TokenizerRecord`: its name and what pins its rule down.

Retriever kinds are registered in the harness and by plugins, so core cannot name their
models. A kind's settings model dumps (``mode="json"``, without ``kind``, which is
``StageReport.kind``) into a :class:`RetrieverRecord`: a read-only mapping of JSON values,
written as the same flat object as before (a value that is not JSON is refused when the
stage is built, not when the file is written).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    PlainSerializer,
    RootModel,
    WithJsonSchema,
)

from groundkit.judgments.corpus._chunking import (
    CharsChunker,
    ChunkerConfig,
    DocumentChunker,
    ParagraphsChunker,
    SentencesChunker,
    TokensChunker,
)

__all__ = [
    "RecordedChunker",
    "RetrieverRecord",
    "TokenizerRecord",
    "chunker_record",
    "full_chunker",
]

# In the schema: an object of JSON values (pydantic's JsonValue would be an empty definition).
_JsonObject = Annotated[
    dict[str, JsonValue],
    WithJsonSchema(
        {
            "type": "object",
            "additionalProperties": {
                "type": ["string", "number", "integer", "boolean", "null", "array", "object"]
            },
        }
    ),
]

_AnyChunker = DocumentChunker | CharsChunker | TokensChunker | SentencesChunker | ParagraphsChunker


class RetrieverRecord(RootModel[_JsonObject]):
    """A stage's retriever settings as run: its kind's settings model dumped to JSON.

    The keys are the kind's settings (``kind`` aside: that is ``StageReport.kind``) and what
    the run chose for the stage (``device_used``, ``executor``). Values are JSON values, so a
    record always survives the report file; it reads like a mapping and compares equal to a
    mapping with the same items.
    """

    model_config = ConfigDict(frozen=True)
    root: _JsonObject = Field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: BaseModel, **run_info: str) -> RetrieverRecord:
        """The record of a kind's settings model (its ``kind`` left out) and the run's choices.

        Args:
            settings: The kind's validated settings (a pydantic model with a ``kind`` field).
            **run_info: What the run chose for the stage (``device_used="cpu"``).
        """
        data = settings.model_dump(mode="json")
        data.pop("kind", None)
        return cls.model_validate({**data, **run_info})

    def __getitem__(self, key: str) -> JsonValue:
        return self.root[key]

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # a mapping's keys
        return iter(self.root)

    def __len__(self) -> int:
        return len(self.root)

    def __contains__(self, key: object) -> bool:
        return key in self.root

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RetrieverRecord):
            return self.root == other.root
        if isinstance(other, Mapping):
            return self.root == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mapping is not hashable

    def get(self, key: str, default: JsonValue = None) -> JsonValue:
        """The value of ``key``, else ``default``."""
        return self.root.get(key, default)

    def keys(self) -> list[str]:
        """The keys, in the recorded order."""
        return list(self.root)

    def items(self) -> list[tuple[str, JsonValue]]:
        """The ``(key, value)`` pairs, in the recorded order."""
        return list(self.root.items())

    def as_dict(self) -> dict[str, JsonValue]:
        """A plain copy of the record (nested values copied too)."""
        copied: dict[str, JsonValue] = self.model_dump(mode="json")
        return copied


def full_chunker(value: Any) -> Any:
    """A chunker config object as the mapping of all its fields (a mapping stays as given).

    The report's validator: an object from Python is recorded in full, a mapping from a file
    keeps the keys it has (see the module documentation).
    """
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def chunker_record(config: _AnyChunker | None) -> dict[str, Any] | None:
    """The chunker as the report records it: ``kind`` and the keys it was given.

    For a report written by groundkit that is every field; for an older report's partial
    mapping, the keys it had, so hashes over it are what they were.
    """
    if config is None:
        return None
    given: dict[str, Any] = config.model_dump(mode="json", exclude_unset=True)
    return {"kind": config.kind, **given}


RecordedChunker = Annotated[
    ChunkerConfig, BeforeValidator(full_chunker), PlainSerializer(chunker_record)
]
"""A report's chunker: validated as a :data:`ChunkerConfig`, written as it was recorded."""


class TokenizerRecord(BaseModel):
    """The run's tokenizer, as the report records it (``RunInfo.tokenizer``).

    Attributes:
        name: As the run named it: ``words``, ``cl100k_base``, ``o200k_base``, a folder holding
            ``tokenizer.json``, or ``model:<model>`` (the dense stages' model's tokenizer).
        version: What pins its rule down: ``1`` for ``words``; else the library's version and
            the first 12 hex digits of the SHA-256 of its vocabulary file.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str = Field(min_length=1)
    version: str = Field(min_length=1)
