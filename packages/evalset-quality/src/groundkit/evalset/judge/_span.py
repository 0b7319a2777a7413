"""The judged hit both the calibration card and the adjudication list store, declared once."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

__all__ = ["JudgedSpan", "SpanKey"]

SpanKey = tuple[str, str, int, int]


class JudgedSpan(BaseModel):
    """A ranked hit's span, the passage the judge read and the judge's grades on it.

    Subclasses add their own fields and list every field in ``json_order``, the key order
    their files have always had (pydantic puts a base's fields first; stored JSON keeps its
    order so a file rewritten by this version reads exactly like one written before).
    """

    model_config = ConfigDict(frozen=True)
    json_order: ClassVar[tuple[str, ...]] = ()

    query_id: str
    stage: str
    rank: int = Field(ge=1)
    doc: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    passage_sha256: str
    grades: list[int]
    majority: int | None

    @property
    def key(self) -> SpanKey:
        """The (query, span) the hit is about."""
        return (self.query_id, self.doc, self.start, self.end)

    @model_serializer(mode="wrap")
    def _in_json_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        ordered = {name: data[name] for name in self.json_order if name in data}
        return ordered | {name: value for name, value in data.items() if name not in ordered}
