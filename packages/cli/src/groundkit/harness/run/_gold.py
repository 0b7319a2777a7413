"""The gold of a run in the forms scoring and traces read: span tables, qrels, query infos."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from groundkit.harness.analysis._evidence import QuoteGold
from groundkit.harness.run._context import RunContext
from groundkit.judgments import ResolvedJudgment
from groundkit.judgments.metrics import GoldTable
from groundkit.judgments.report import GoldEvidence, QueryInfo

__all__ = ["corpus_doc", "gold_structures", "query_infos"]

IntArray = npt.NDArray[np.int64]


def corpus_doc(doc_codes: Mapping[str, int], doc: str) -> str:
    """The corpus's id for a gold document, also when the judgment spells it decomposed.

    Resolution matches ids up to Unicode NFC (corpus ids are NFC); the gold's spans, qrels and
    report entries must then name the corpus's spelling, the one hits carry.
    """
    if doc in doc_codes:
        return doc
    composed = unicodedata.normalize("NFC", doc)
    return composed if composed in doc_codes else doc


def gold_structures(
    ctx: RunContext, answerable: Sequence[ResolvedJudgment]
) -> tuple[GoldTable, list[list[QuoteGold]], dict[str, dict[str, int]]]:
    quote_counts: list[int] = []
    grades: list[int] = []
    span_counts: list[int] = []
    span_docs: list[int] = []
    span_starts: list[int] = []
    span_ends: list[int] = []
    traces_gold: list[list[QuoteGold]] = []
    qrels: dict[str, dict[str, int]] = {}
    for resolved in answerable:
        quotes: list[QuoteGold] = []
        qrel: dict[str, int] = {}
        quote_counts.append(len(resolved.quotes))
        for quote in resolved.quotes:
            grades.append(quote.gold.grade)
            doc = corpus_doc(ctx.doc_codes, quote.gold.doc)
            code = ctx.doc_codes.get(doc, -1)
            spans = [(s.start, s.end) for s in quote.spans if s.doc in ctx.doc_codes]
            span_counts.append(len(spans))
            for s_start, s_end in spans:
                span_docs.append(code)
                span_starts.append(s_start)
                span_ends.append(s_end)
            quotes.append(
                QuoteGold(doc=code, spans=np.asarray(spans, dtype=np.int64).reshape(-1, 2))
            )
            qrel[doc] = max(qrel.get(doc, 0), quote.gold.grade)
        traces_gold.append(quotes)
        qrels[resolved.judgment.query_id] = qrel

    def offsets(counts: list[int]) -> IntArray:
        out = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(np.asarray(counts, dtype=np.int64), out=out[1:])
        return out

    table = GoldTable(
        query_ids=tuple(ctx.query_ids),
        quote_offsets=offsets(quote_counts),
        grades=np.asarray(grades, dtype=np.int64),
        span_offsets=offsets(span_counts),
        span_docs=np.asarray(span_docs, dtype=np.int64),
        span_starts=np.asarray(span_starts, dtype=np.int64),
        span_ends=np.asarray(span_ends, dtype=np.int64),
        doc_ids=ctx.doc_ids,
    )
    return table, traces_gold, qrels


def query_infos(
    resolved: Sequence[ResolvedJudgment], doc_codes: Mapping[str, int]
) -> list[QueryInfo]:
    infos: list[QueryInfo] = []
    for item in resolved:
        judgment = item.judgment
        gold = [
            GoldEvidence(
                doc=corpus_doc(doc_codes, quote.gold.doc),
                quote=quote.gold.quote,
                grade=quote.gold.grade,
                spans=[(s.start, s.end) for s in quote.spans],
                method=quote.method,
                closest=quote.closest,
                similarity=quote.similarity,
                start=quote.gold.start,
            )
            for quote in item.quotes
        ]
        infos.append(
            QueryInfo(
                query_id=judgment.query_id,
                query=judgment.query,
                category=judgment.category,
                qtype=judgment.qtype,
                gold=gold,
            )
        )
    return infos
