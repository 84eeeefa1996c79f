"""Fixed-size windows, sliding windows and token windows.

Token windows reproduce LangChain's ``TokenTextSplitter``: the text is encoded once and
cut into windows of ``size`` token ids, each starting ``size - overlap`` ids after the
previous one. A window's characters are found from the byte lengths of its tokens.

When a token boundary falls inside a multi-byte character (an emoji or CJK character
whose UTF-8 bytes are split across two tokens), LangChain decodes the halves as U+FFFD.
Here the boundary is snapped so that the character belongs to the window holding its
first byte: a window's end moves forward to the end of that character and the next
window's start moves forward past it. Every character is kept whole, exactly once at
such a boundary, and ``text[start:end]`` stays exact. A window left with no character
of its own is dropped. Because a re-encoded chunk can differ from its window by a token
at such a boundary, every chunk is measured again; one that comes out over ``size`` is
flagged ``"over limit: token boundary"``. A window of whitespace alone, which LangChain
returns, is dropped (as every strategy's are, in :func:`~chunking.model.build_chunks`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..model import Piece
from ..params import Param, Strategy, overlap_below_size, overlap_param, size_param, unit_param
from ..units import DEFAULT_ENCODING, Sizer, TokenSizer, get_sizer, word_re

TOKEN_BOUNDARY = "over limit: token boundary"


def _steps(n: int, size: int, step: int) -> Iterator[tuple[int, int]]:
    """Windows ``[i, i + size)`` over ``n`` items, ``step`` apart, the last one ending at n."""
    i = 0
    while i < n:
        j = min(i + size, n)
        yield i, j
        if j == n:
            return
        i += step


def token_char_offsets(
    text: str, encoding_name: str = DEFAULT_ENCODING, sizer: Sizer | None = None
) -> np.ndarray:
    """Encode ``text`` (with ``sizer``'s encoder when it counts tokens); return the
    character offset of every token boundary.

    ``offsets[i]`` is where token ``i`` starts, ``offsets[-1] == len(text)``. A boundary
    inside a multi-byte character is snapped forward past that character.
    """
    if not isinstance(sizer, TokenSizer) or sizer.encoding_name != encoding_name:
        sizer = get_sizer("tokens", encoding_name)
    assert isinstance(sizer, TokenSizer)
    ids = sizer.tokens.encode(text)
    byte_bounds = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(sizer.token_lengths[ids], out=byte_bounds[1:])
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    char_starts = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum((data & 0xC0) != 0x80, out=char_starts[1:])
    if byte_bounds[-1] != len(data):  # pragma: no cover - tiktoken invariant
        raise RuntimeError("token bytes do not add up to the text's bytes")
    return char_starts[byte_bounds]


def token_windows(
    text: str, size: int, overlap: int, sizer: Sizer, encoding_name: str = DEFAULT_ENCODING
) -> Iterator[Piece]:
    bounds = token_char_offsets(text, encoding_name, sizer)
    n_tokens = len(bounds) - 1
    for i, j in _steps(n_tokens, size, size - overlap):
        start, end = int(bounds[i]), int(bounds[j])
        if end <= start:
            continue
        n = sizer.size(text[start:end])
        meta: dict[str, Any] = {"boundary": "size", "tokens": [i, j]}
        if n > size:
            meta["flags"] = [TOKEN_BOUNDARY]
        yield Piece(start, end, meta, n)


def _spans_windows(
    text: str, spans: list[tuple[int, int]], size: int, step: int
) -> Iterator[Piece]:
    for i, j in _steps(len(spans), size, step):
        yield Piece(spans[i][0], spans[j - 1][1], {"boundary": "size"}, j - i)


def fixed_windows(text: str, unit: str, size: int, step: int, sizer: Sizer) -> Iterator[Piece]:
    """Windows of exactly ``size`` units (the last may be shorter), ``step`` apart."""
    if unit == "tokens":
        yield from token_windows(text, size, size - step, sizer)
    elif unit == "words":
        spans = [m.span() for m in word_re().finditer(text)]
        yield from _spans_windows(text, spans, size, step)
    else:
        for i, j in _steps(len(text), size, step):
            if not text[i:j].isspace():
                yield Piece(i, j, {"boundary": "size"}, j - i)


def _fixed(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return fixed_windows(text, p["unit"], p["size"], p["size"] - p["overlap"], sizer)


FIXED = Strategy(
    "fixed",
    label="Fixed size",
    description="Cut every `size` units regardless of content, each chunk sharing "
    "`overlap` units with the previous one. The baseline every other strategy beats.",
    params=(size_param(500), overlap_param(50), unit_param("chars", tokenizers=False)),
    checks=(overlap_below_size,),
    split=_fixed,
)


def _stride_within_window(p: Mapping[str, Any]) -> None:
    if p["stride"] > p["window"]:
        raise ValueError(
            f"stride ({p['stride']}) must not exceed window ({p['window']}), or text between "
            "windows would be skipped"
        )


def _sliding(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return fixed_windows(text, p["unit"], p["window"], p["stride"], sizer)


SLIDING = Strategy(
    "sliding",
    label="Sliding window",
    description="Windows of `window` units that advance by `stride` units; a stride "
    "smaller than the window makes consecutive windows share text.",
    params=(
        Param("window", int, 400, "Window length, in the chosen unit.", minimum=1),
        Param("stride", int, 200, "How far each window advances.", minimum=1),
        unit_param("chars", tokenizers=False),
    ),
    checks=(_stride_within_window,),
    limit_param="window",
    split=_sliding,
)


def _token(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return token_windows(text, p["size"], p["overlap"], sizer)


TOKEN = Strategy(
    "token",
    label="Token windows",
    description="Windows of `size` cl100k_base tokens, as LangChain's TokenTextSplitter "
    "cuts them, with exact character offsets.",
    params=(
        size_param(160, "Window length in tokens."),
        overlap_param(0, "Tokens shared by consecutive windows."),
        Param("unit", str, "tokens", "Token windows always count tokens.", choices=("tokens",)),
    ),
    checks=(overlap_below_size,),
    split=_token,
)
