"""The ``recursive`` strategy: LangChain's recursive character splitting with exact
offsets. The algorithm, and how it differs from LangChain's, is in
:mod:`chunking.engine.recursive`."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..engine.recursive import (
    DEFAULT_SEPARATORS,
    KEEP_CHOICES,
    RecursiveSplitter,
    dropping_text_error,
    recursive_pieces,
)
from ..model import Piece
from ..params import Param, Strategy, overlap_below_size, overlap_param, size_param, unit_param
from ..units import Sizer


def _valid_separators(p: Mapping[str, Any]) -> None:
    if not p["is_separator_regex"]:
        if p["keep_separator"] == "none":
            for sep in p["separators"]:
                if sep and not sep.isspace():
                    raise dropping_text_error(sep)
        return
    for sep in p["separators"]:
        try:
            re.compile(sep)
        except re.error as exc:
            raise ValueError(
                f"separator {sep!r} is not a valid regular expression ({exc}); escape it "
                "or set is_separator_regex to false"
            ) from None


def _separators_param(default: tuple[str, ...]) -> Param:
    return Param(
        "separators",
        list,
        default,
        "Separators to try, from the most to the least meaningful; the empty string "
        "splits between characters. As in LangChain's RecursiveCharacterTextSplitter.",
    )


KEEP_SEPARATOR = Param(
    "keep_separator",
    str,
    "end",
    "Where a separator goes: at the start of the next piece (LangChain's "
    "keep_separator=True), at the end of the previous one, or dropped ('none').",
    choices=KEEP_CHOICES,
)
STRIP_WHITESPACE = Param(
    "strip_whitespace", bool, True, "Trim whitespace at both ends of every chunk."
)
SEPARATOR_REGEX = Param(
    "is_separator_regex", bool, False, "Read the separators as regular expressions."
)


def _recursive(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    splitter = RecursiveSplitter(
        text,
        sizer,
        p["size"],
        p["overlap"],
        p["separators"],
        p["keep_separator"],
        p["strip_whitespace"],
        p["is_separator_regex"],
    )
    return recursive_pieces(text, sizer, splitter)


RECURSIVE = Strategy(
    "recursive",
    label="Recursive",
    description="Split at the most meaningful separator that makes pieces fit "
    "(paragraphs, then lines, sentence ends, words, characters), then merge "
    "neighbouring pieces up to the size limit. The general-purpose default.",
    params=(
        size_param(600),
        overlap_param(0),
        unit_param("chars"),
        _separators_param(DEFAULT_SEPARATORS),
        KEEP_SEPARATOR,
        STRIP_WHITESPACE,
        SEPARATOR_REGEX,
    ),
    checks=(overlap_below_size, _valid_separators),
    split=_recursive,
)
