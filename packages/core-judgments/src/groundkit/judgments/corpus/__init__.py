"""The corpus, its chunkers and tokenizers: documents in, character spans out."""

from typing import TYPE_CHECKING

from groundkit.judgments.lazy import lazy_exports

if TYPE_CHECKING:
    from groundkit.judgments.corpus._chunker_spec import (
        chunker_spec,
        parse_chunker_config,
        parse_chunker_spec,
    )
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
        uses_tokenizer,
    )
    from groundkit.judgments.corpus._corpus import Corpus
    from groundkit.judgments.corpus._tokenizer_kinds import HuggingFaceTokenizer, TiktokenTokenizer
    from groundkit.judgments.corpus._tokenizers import (
        TOKENS_INSTALL_HINT,
        Tokenizer,
        TokenizerKind,
        WordsTokenizer,
        check_extra,
        check_tokenizer,
        find_tokenizer_kind,
        load_tokenizer,
        register_tokenizer_kind,
        tokenizer_choices,
    )

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
    "parse_chunker_config": "groundkit.judgments.corpus._chunker_spec",
    "parse_chunker_spec": "groundkit.judgments.corpus._chunker_spec",
    "uses_tokenizer": "groundkit.judgments.corpus._chunking",
    "TOKENS_INSTALL_HINT": "groundkit.judgments.corpus._tokenizers",
    "Tokenizer": "groundkit.judgments.corpus._tokenizers",
    "TokenizerKind": "groundkit.judgments.corpus._tokenizers",
    "WordsTokenizer": "groundkit.judgments.corpus._tokenizers",
    "check_extra": "groundkit.judgments.corpus._tokenizers",
    "check_tokenizer": "groundkit.judgments.corpus._tokenizers",
    "HuggingFaceTokenizer": "groundkit.judgments.corpus._tokenizer_kinds",
    "TiktokenTokenizer": "groundkit.judgments.corpus._tokenizer_kinds",
    "find_tokenizer_kind": "groundkit.judgments.corpus._tokenizers",
    "load_tokenizer": "groundkit.judgments.corpus._tokenizers",
    "register_tokenizer_kind": "groundkit.judgments.corpus._tokenizers",
    "tokenizer_choices": "groundkit.judgments.corpus._tokenizers",
}

__all__ = [
    "TOKENS_INSTALL_HINT",
    "CharsChunker",
    "Chunk",
    "ChunkerConfig",
    "Corpus",
    "DocumentChunker",
    "HuggingFaceTokenizer",
    "ParagraphsChunker",
    "SentencesChunker",
    "TiktokenTokenizer",
    "Tokenizer",
    "TokenizerKind",
    "TokensChunker",
    "WordsTokenizer",
    "check_extra",
    "check_tokenizer",
    "chunk_corpus",
    "chunk_text",
    "chunker_spec",
    "find_tokenizer_kind",
    "load_tokenizer",
    "parse_chunker_config",
    "parse_chunker_spec",
    "register_tokenizer_kind",
    "tokenizer_choices",
    "uses_tokenizer",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
