"""chonkie's chunkers, run by chonkie itself.

Offsets are chonkie's ``start_index``, checked by :mod:`.align`. chonkie's ``tokenizer``
is ``"character"`` (its default) or our offline cl100k_base encoding (unit ``tokens``).
The semantic chunker is given our embedding model through chonkie's ``BaseEmbeddings``
interface (its own default, ``minishlab/potion-base-32M``, would be downloaded).

chonkie's ``CodeChunker`` needs ``tree-sitter-language-pack``, which downloads its
grammars on first use; offline, ``chonkie.code`` says so in one line instead of trying.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ..model import Piece
from ..params import Param, Strategy
from ..units import Sizer
from .align import LibraryChunk, align
from .common import (
    embedder,
    library_errors,
    model_param,
    overlap_param,
    require,
    size_param,
    unit_choice,
)

LIBRARY = "chonkie"
#: chonkie downloads the rest of the grammars while fewer than this many are present.
_GRAMMARS_BEFORE_DOWNLOAD = 19


def _chonkie(strategy: str) -> Any:
    return require("chonkie", "chonkie", strategy)


def tokenizer(unit: str) -> Any:
    """chonkie's ``tokenizer`` argument for a unit."""
    if unit == "chars":
        return "character"
    from ..units import get_encoding

    return get_encoding()


def _run(strategy: str, chunker: Any, text: str, sizer: Sizer, limit: int | None) -> list[Piece]:
    with library_errors(strategy, LIBRARY):
        chunks = list(chunker.chunk(text))
    found = [LibraryChunk(c.text, c.start_index) for c in chunks]
    return align(text, found, sizer, limit=limit)


def _recursive(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    name = "chonkie.recursive"
    with library_errors(name, LIBRARY):
        chunker = _chonkie(name).RecursiveChunker(
            tokenizer=tokenizer(p["unit"]),
            chunk_size=p["chunk_size"],
            min_characters_per_chunk=p["min_characters_per_chunk"],
        )
    return _run(name, chunker, text, sizer, p["chunk_size"])


def _token(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    name = "chonkie.token"
    with library_errors(name, LIBRARY):
        chunker = _chonkie(name).TokenChunker(
            tokenizer=tokenizer(p["unit"]),
            chunk_size=p["chunk_size"],
            chunk_overlap=p["chunk_overlap"],
        )
    return _run(name, chunker, text, sizer, p["chunk_size"])


def _sentence(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    name = "chonkie.sentence"
    with library_errors(name, LIBRARY):
        chunker = _chonkie(name).SentenceChunker(
            tokenizer=tokenizer(p["unit"]),
            chunk_size=p["chunk_size"],
            chunk_overlap=p["chunk_overlap"],
            min_sentences_per_chunk=p["min_sentences_per_chunk"],
            min_characters_per_sentence=p["min_characters_per_sentence"],
        )
    return _run(name, chunker, text, sizer, p["chunk_size"])


def embeddings_adapter(model: Any, unit: str) -> Any:
    """Our embedder as chonkie ``BaseEmbeddings``; its tokenizer measures ``unit``."""
    import numpy as np

    base = require("chonkie.embeddings", "chonkie", "chonkie.semantic")

    class OurEmbeddings(base.BaseEmbeddings):  # type: ignore[name-defined]
        def embed(self, text: str) -> Any:
            return np.asarray(model.embed([text])[0])

        def embed_batch(self, texts: list[str]) -> list[Any]:
            return list(model.embed(texts)) if texts else []

        @property
        def dimension(self) -> int:
            return int(model.dimension)

        def get_tokenizer(self) -> Any:
            return tokenizer(unit)

        def __repr__(self) -> str:
            return f"OurEmbeddings({model.name})"

    return OurEmbeddings()


def _semantic(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    name = "chonkie.semantic"
    adapter = embeddings_adapter(embedder(p), p["unit"])
    with library_errors(name, LIBRARY):
        chunker = _chonkie(name).SemanticChunker(
            embedding_model=adapter,
            threshold=p["threshold"],
            chunk_size=p["chunk_size"],
            similarity_window=p["similarity_window"],
            min_sentences_per_chunk=p["min_sentences_per_chunk"],
            min_characters_per_sentence=p["min_characters_per_sentence"],
            skip_window=p["skip_window"],
        )
    return _run(name, chunker, text, sizer, p["chunk_size"])


def _code(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    name = "chonkie.code"
    lib = _chonkie(name)
    try:
        pack = importlib.import_module("tree_sitter_language_pack")
    except ImportError:
        pack = None
    if pack is None or len(pack.downloaded_languages()) <= _GRAMMARS_BEFORE_DOWNLOAD:
        raise ValueError(
            f"strategy {name!r} needs tree-sitter-language-pack with its grammars, which it "
            "downloads on first use (not possible offline, so not in the engines extra); "
            "with network access: pip install tree-sitter-language-pack, then "
            "tree_sitter_language_pack.download_all(); or use our 'code' strategy"
        )
    with library_errors(name, LIBRARY):
        chunker = lib.CodeChunker(
            tokenizer=tokenizer(p["unit"]), chunk_size=p["chunk_size"], language=p["language"]
        )
    return _run(name, chunker, text, sizer, p["chunk_size"])


# --- declarations ---------------------------------------------------------------------

_UNIT = unit_choice(("chars", "tokens"), "chars", "chunk_size")
_SIZE = "Maximum chunk size, in chonkie's tokenizer's units (see unit)."


def _overlap_below(p: Mapping[str, Any]) -> None:
    if p["chunk_overlap"] >= p["chunk_size"]:
        raise ValueError(
            f"chunk_overlap ({p['chunk_overlap']}) must be smaller than chunk_size "
            f"({p['chunk_size']}); lower chunk_overlap"
        )


RECURSIVE = Strategy(
    "chonkie.recursive",
    label="chonkie: RecursiveChunker",
    description="chonkie's RecursiveChunker with its default rules: paragraphs, sentences, "
    "punctuation, words, characters; pieces under min_characters_per_chunk are merged.",
    params=(
        size_param("chunk_size", 2048, _SIZE),
        Param(
            "min_characters_per_chunk",
            int,
            24,
            "Smallest piece, in characters, kept on its own.",
            minimum=1,
            maximum=1_000_000,
        ),
        _UNIT,
    ),
    split=_recursive,
    limit_param="chunk_size",
)

TOKEN = Strategy(
    "chonkie.token",
    label="chonkie: TokenChunker",
    description="chonkie's TokenChunker: fixed windows of chunk_size tokens (or "
    "characters) with chunk_overlap.",
    params=(
        size_param("chunk_size", 2048, _SIZE),
        overlap_param("chunk_overlap", 0, "Tokens shared by consecutive chunks."),
        _UNIT,
    ),
    split=_token,
    checks=(_overlap_below,),
    limit_param="chunk_size",
)

SENTENCE = Strategy(
    "chonkie.sentence",
    label="chonkie: SentenceChunker",
    description="chonkie's SentenceChunker: sentences (split at '. ', '! ', '? ' and "
    "new lines) packed up to chunk_size with chunk_overlap.",
    params=(
        size_param("chunk_size", 2048, _SIZE),
        overlap_param("chunk_overlap", 0, "Tokens shared by consecutive chunks."),
        Param("min_sentences_per_chunk", int, 1, "Fewest sentences a chunk holds.", minimum=1),
        Param(
            "min_characters_per_sentence",
            int,
            12,
            "Shorter sentences are joined to the next.",
            minimum=1,
        ),
        _UNIT,
    ),
    split=_sentence,
    checks=(_overlap_below,),
    limit_param="chunk_size",
)

SEMANTIC = Strategy(
    "chonkie.semantic",
    label="chonkie: SemanticChunker",
    description="chonkie's SemanticChunker over our embedding model (chonkie's default "
    "model would be downloaded): sentence windows compared, boundaries found by peak "
    "detection on the smoothed similarity, groups packed up to chunk_size.",
    params=(
        Param(
            "threshold",
            float,
            0.8,
            "Similarity threshold (between 0 and 1).",
            minimum=0.01,
            maximum=0.99,
        ),
        size_param("chunk_size", 2048, _SIZE),
        Param("similarity_window", int, 3, "Sentences compared at once.", minimum=1),
        Param("min_sentences_per_chunk", int, 1, "Fewest sentences a chunk holds.", minimum=1),
        Param(
            "min_characters_per_sentence",
            int,
            24,
            "Shorter sentences are joined to the next.",
            minimum=1,
        ),
        Param(
            "skip_window",
            int,
            0,
            "Merge similar groups up to this many groups apart (0: off).",
            minimum=0,
            maximum=10,
        ),
        unit_choice(("tokens", "chars"), "tokens", "chunk_size"),
        model_param(),
    ),
    split=_semantic,
    limit_param="chunk_size",
)

CODE = Strategy(
    "chonkie.code",
    label="chonkie: CodeChunker",
    description="chonkie's CodeChunker (tree-sitter syntax trees). Needs "
    "tree-sitter-language-pack with its grammars downloaded, which is not possible "
    "offline: here it explains that instead of running.",
    params=(
        size_param("chunk_size", 2048, _SIZE),
        Param("language", str, "auto", "The code's language, or auto to detect it."),
        _UNIT,
    ),
    split=_code,
    limit_param="chunk_size",
)

STRATEGIES = (RECURSIVE, TOKEN, SENTENCE, SEMANTIC, CODE)
