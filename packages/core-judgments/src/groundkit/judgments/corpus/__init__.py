"""The corpus and its chunkers: documents in, character spans out."""

from typing import TYPE_CHECKING

from groundkit.judgments.lazy import lazy_exports

if TYPE_CHECKING:
    from groundkit.judgments.corpus._chunker_spec import chunker_spec, parse_chunker_spec
    from groundkit.judgments.corpus._chunking import (
        CharsChunker,
        Chunk,
        ChunkerConfig,
        DocumentChunker,
        ParagraphsChunker,
        SentencesChunker,
        TokensChunker,
        chunk_corpus,
        chunk_text,
        parse_chunker_config,
    )
    from groundkit.judgments.corpus._corpus import Corpus

_EXPORTS: dict[str, str] = {
    "CharsChunker": "groundkit.judgments.corpus._chunking",
    "Chunk": "groundkit.judgments.corpus._chunking",
    "ChunkerConfig": "groundkit.judgments.corpus._chunking",
    "Corpus": "groundkit.judgments.corpus._corpus",
    "DocumentChunker": "groundkit.judgments.corpus._chunking",
    "ParagraphsChunker": "groundkit.judgments.corpus._chunking",
    "SentencesChunker": "groundkit.judgments.corpus._chunking",
    "TokensChunker": "groundkit.judgments.corpus._chunking",
    "chunk_corpus": "groundkit.judgments.corpus._chunking",
    "chunk_text": "groundkit.judgments.corpus._chunking",
    "chunker_spec": "groundkit.judgments.corpus._chunker_spec",
    "parse_chunker_config": "groundkit.judgments.corpus._chunking",
    "parse_chunker_spec": "groundkit.judgments.corpus._chunker_spec",
}

__all__ = [
    "CharsChunker",
    "Chunk",
    "ChunkerConfig",
    "Corpus",
    "DocumentChunker",
    "ParagraphsChunker",
    "SentencesChunker",
    "TokensChunker",
    "chunk_corpus",
    "chunk_text",
    "chunker_spec",
    "parse_chunker_config",
    "parse_chunker_spec",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
