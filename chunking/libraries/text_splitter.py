"""text-splitter (``semantic-text-splitter``, Rust with Python bindings), run by itself.

Offsets are the character offsets of ``chunk_indices``, checked by :mod:`.align`.
Tokens are cl100k_base as bundled inside text-splitter (``from_tiktoken_model``, offline);
words are counted by a callback (``from_callback``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import Piece
from ..params import Param, Strategy
from ..units import Sizer
from .align import LibraryChunk, align
from .common import declare, library_errors, overlap_param, require, size_param, unit_choice

LIBRARY = "text-splitter"
#: A model name text-splitter maps to cl100k_base.
_CL100K_MODEL = "gpt-4"


def _splitter(cls: Any, p: Mapping[str, Any]) -> Any:
    kwargs = {"overlap": p["overlap"], "trim": p["trim"]}
    if p["unit"] == "tokens":
        return cls.from_tiktoken_model(_CL100K_MODEL, p["capacity"], **kwargs)
    if p["unit"] == "words":
        return cls.from_callback(lambda text: len(text.split()), p["capacity"], **kwargs)
    return cls(p["capacity"], **kwargs)


def _split_with(class_name: str, strategy: str) -> Any:
    def split(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
        lib = require("semantic_text_splitter", "semantic-text-splitter", strategy)
        with library_errors(strategy, LIBRARY):
            pairs = _splitter(getattr(lib, class_name), p).chunk_indices(text)
        found = [LibraryChunk(chunk, start) for start, chunk in pairs]
        return align(text, found, sizer, limit=p["capacity"], limit_name="capacity")

    return split


def _check_overlap(p: Mapping[str, Any]) -> None:
    if p["overlap"] >= p["capacity"]:
        raise ValueError(
            f"overlap ({p['overlap']}) must be smaller than capacity ({p['capacity']}); "
            "lower overlap"
        )


_PARAMS = (
    size_param("capacity", 600, "Maximum chunk size (see unit)."),
    overlap_param("overlap", 0, "How much consecutive chunks may share."),
    Param(
        "trim",
        bool,
        True,
        "Trim whitespace from the start and end of chunks (text-splitter's default).",
    ),
    unit_choice(("chars", "tokens", "words"), "chars", "capacity"),
)


def _splitter_strategy(class_name: str, name: str, description: str) -> Strategy:
    """text-splitter's ``class_name``: every splitter takes the same parameters."""
    return declare(
        LIBRARY,
        name,
        class_name,
        description,
        _PARAMS,
        split=_split_with(class_name, name),
        checks=(_check_overlap,),
        limit_param="capacity",
    )


TEXT = _splitter_strategy(
    "TextSplitter",
    "text-splitter",
    "text-splitter's TextSplitter: the largest semantic level that fits (sentences, then "
    "words, graphemes...), neighbours merged up to capacity.",
)

MARKDOWN = _splitter_strategy(
    "MarkdownSplitter",
    "text-splitter.markdown",
    "text-splitter's MarkdownSplitter: as TextSplitter, with Markdown's levels (headings, "
    "blocks, list items) above sentences.",
)

STRATEGIES = (TEXT, MARKDOWN)
