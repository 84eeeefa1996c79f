"""The ``recursive`` strategy: LangChain's recursive character splitting with exact
offsets. The algorithm, and how it differs from LangChain's, is in
:mod:`chunking.engine.recursive`.

Its ``language`` preset takes the separators of LangChain's
``RecursiveCharacterTextSplitter.from_language(...)`` for a programming or markup
language, read from the installed ``langchain-text-splitters`` (the ``engines`` extra)
when a text is cut, so that they are LangChain's own list for that version, as regular
expressions (``from_language`` sets ``is_separator_regex=True``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
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

#: The languages of LangChain's ``Language`` enum (its values) that have separators,
#: for the preset (``perl`` is in the enum, but LangChain has no list for it).
LANGUAGES = (
    *("c", "cobol", "cpp", "csharp", "elixir", "go", "haskell", "html", "java", "js"),
    *("kotlin", "latex", "lua", "markdown", "php", "powershell", "proto", "python"),
    *("r", "rst", "ruby", "rust", "scala", "sol", "swift", "ts", "visualbasic6"),
)
#: The ``language`` value that keeps the ``separators`` parameter.
NO_LANGUAGE = "none"


@cache
def language_separators(language: str) -> tuple[str, ...]:
    """LangChain's separators for ``language`` (regular expressions), as
    ``RecursiveCharacterTextSplitter.from_language`` uses them; ``ValueError`` naming
    the extra to install when ``langchain-text-splitters`` is missing."""
    try:
        from langchain_text_splitters import Language, RecursiveCharacterTextSplitter
    except ImportError:
        raise ValueError(
            f"the {language!r} preset reads LangChain's separator lists; install "
            "langchain-text-splitters (pip install 'chunk-explorer[engines]') or set "
            "language to 'none'"
        ) from None
    try:
        which = Language(language)
    except ValueError:
        raise ValueError(
            f"the installed langchain-text-splitters has no language {language!r}"
        ) from None
    return tuple(RecursiveCharacterTextSplitter.get_separators_for_language(which))


def effective_separators(p: Mapping[str, Any]) -> tuple[list[str], bool]:
    """The separators a configuration cuts at and whether they are regular expressions:
    the language preset's (regular expressions), or the ``separators`` parameter."""
    language = p.get("language", NO_LANGUAGE)
    if language != NO_LANGUAGE:
        return list(language_separators(language)), True
    return list(p["separators"]), bool(p["is_separator_regex"])


def _valid_separators(p: Mapping[str, Any]) -> None:
    if p.get("language", NO_LANGUAGE) != NO_LANGUAGE:
        return  # LangChain's own lists, checked when they are read
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


LANGUAGE = Param(
    "language",
    str,
    NO_LANGUAGE,
    "A preset: LangChain's separators for a programming or markup language, as "
    "RecursiveCharacterTextSplitter.from_language(...) uses them (regular expressions; "
    "they replace the separators above). 'none' keeps the separators above.",
    choices=(NO_LANGUAGE, *LANGUAGES),
)


def _recursive(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    separators, regex = effective_separators(p)
    splitter = RecursiveSplitter(
        text,
        sizer,
        p["size"],
        p["overlap"],
        separators,
        p["keep_separator"],
        p["strip_whitespace"],
        regex,
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
        LANGUAGE,
    ),
    checks=(overlap_below_size, _valid_separators),
    split=_recursive,
)
