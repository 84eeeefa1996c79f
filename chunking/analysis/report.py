"""Summary statistics and warnings about a list of chunks (UI-free, usable by the CLI).

:func:`make_report` gathers everything the app's Explore page and ``chunk-explorer
stats`` show about one chunking into a :class:`Report`: sizes and their summaries in
every unit, the warnings, the boundaries and the PDF pages of every chunk.

Everything here is a pure function of the document text and its chunks. Nothing is
cached here: callers (the app's ``st.cache_data`` wrappers, the CLI) decide that; only
the document's sentences are shared, segmented once per process by ``engine.spans``.

Warnings say what went wrong *and* what to do about it:

- chunks over the size limit (documented exceptions are counted separately),
- tiny chunks (under a share of the limit),
- cuts in the middle of a word or a sentence,
- chunks an embedding model would truncate (all-MiniLM-L6-v2 reads 256 word pieces; a
  chosen model whose own tokens the sizes count, its window in them).
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from ..config import Config
from ..documents.io import Document
from ..engine.sections import TABLE_ROW
from ..engine.spans import document_sentences
from ..model import Chunk, Progress, report_fraction
from ..output.export import chunk_pages
from ..units import (
    DEFAULT_MODEL,
    DEFAULT_MODEL_WINDOW,
    SPECIAL_TOKENS,
    UNITS,
    CountingSizer,
    get_sizer,
    load_hf_tokenizer,
    model_tokenizer_path,
)

#: How many word pieces all-MiniLM-L6-v2 reads, special tokens included.
DEFAULT_MODEL_MAX_TOKENS = DEFAULT_MODEL_WINDOW
#: The embedding model that reads the chunks when it is not the bundled one: its name
#: and how many tokens of the configuration's unit (its own tokens) it reads.
Reader = tuple[str, int]
#: A chunk under this share of the size limit counts as tiny.
TINY_RATIO = 0.1
#: Without a size limit, a chunk under this many characters counts as tiny.
TINY_CHARS = 50
#: Word pieces added by the model around every text: ``[CLS]`` and ``[SEP]``.
#: How many chunk numbers a warning message lists before "and N more".
SHOWN_IN_MESSAGE = 8
#: Strategies that cut at separators (paragraphs, sentences), suggested by the advice.
_SEPARATING = ("recursive", "sentence")


# ------------------------------------------------------------------------- sizes


@dataclass(frozen=True)
class SizeSummary:
    """Count, mean, population standard deviation, minimum and maximum of sizes."""

    unit: str
    count: int
    mean: float
    std: float
    min: int
    max: int

    def to_dict(self) -> dict[str, float | int | str]:
        return {
            "unit": self.unit,
            "count": self.count,
            "mean": self.mean,
            "std": self.std,
            "min": self.min,
            "max": self.max,
        }


def describe(sizes: Sequence[int], unit: str) -> SizeSummary:
    """Summarise ``sizes``; an empty sequence gives zeros."""
    n = len(sizes)
    if n == 0:
        return SizeSummary(unit, 0, 0.0, 0.0, 0, 0)
    mean = sum(sizes) / n
    variance = sum((s - mean) ** 2 for s in sizes) / n
    return SizeSummary(unit, n, mean, math.sqrt(variance), min(sizes), max(sizes))


def sizes_in(chunks: Sequence[Chunk], unit: str, configured_unit: str | None = None) -> list[int]:
    """Every chunk's size in ``unit``; reuses ``chunk.size`` when it is already that unit."""
    if unit == configured_unit:
        return [c.size for c in chunks]
    texts = [c.embedding_text for c in chunks]  # what the unit's reader sees
    if unit == "chars":
        return [len(t) for t in texts]
    sizer = get_sizer(unit)
    if isinstance(sizer, CountingSizer):
        return sizer.sizes(texts)  # one batch through the tokenizer
    return [sizer.size(t) for t in texts]


def wordpieces_in(text: str, chunks: Sequence[Chunk], piece_starts: np.ndarray) -> list[int]:
    """Every chunk's size in the ``model`` unit (word pieces, no special tokens), from
    :func:`wordpiece_starts` of the whole ``text``: the pieces starting inside a chunk,
    exact when both its edges are clean (:func:`clean_edge`); the other chunks, and those
    a model reads with more than their text (:func:`_reads_more`), are tokenized on
    their own. One pass over the document instead of one per chunk."""
    starts = np.fromiter((c.start for c in chunks), dtype=np.int64, count=len(chunks))
    ends = np.fromiter((c.end for c in chunks), dtype=np.int64, count=len(chunks))
    counts = (np.searchsorted(piece_starts, ends) - np.searchsorted(piece_starts, starts)).tolist()
    unsure = [
        i
        for i, c in enumerate(chunks)
        if not (clean_edge(text, c.start) and clean_edge(text, c.end)) or _reads_more(c)
    ]
    if unsure:
        sizer = get_sizer("model")
        assert isinstance(sizer, CountingSizer)
        read = [chunks[i].embedding_text for i in unsure]
        for i, n in zip(unsure, sizer.sizes(read), strict=True):
            counts[i] = n
    return counts


def _reads_more(chunk: Chunk) -> bool:
    """Whether a model reads ``chunk`` as something else than its text: a context before
    it (a table's header), or its visible text (:attr:`Chunk.embedding_text`)."""
    return "visible_text" in chunk.metadata or bool(chunk.metadata.get("context"))


def all_sizes(
    chunks: Sequence[Chunk],
    configured_unit: str | None = None,
    *,
    text: str | None = None,
    piece_starts: np.ndarray | None = None,
) -> dict[str, list[int]]:
    """Sizes in every unit (characters, words, cl100k tokens, the embedding model's word
    pieces) and in the configured one, keyed by unit.

    With the document's ``text`` and its ``piece_starts`` (:func:`wordpiece_starts`),
    word pieces are counted from them (:func:`wordpieces_in`), with the same result.
    """
    units = [*UNITS, *([configured_unit] if configured_unit not in (None, *UNITS) else [])]
    if configured_unit != "model" and wordpiece_tokenizer() is None:
        units.remove("model")  # the bundled model is not installed (core alone)
    sizes = {}
    for unit in units:
        counted = unit == "model" and configured_unit != "model"
        if counted and text is not None and piece_starts is not None:
            sizes[unit] = wordpieces_in(text, chunks, piece_starts)
        else:
            sizes[unit] = sizes_in(chunks, unit, configured_unit)
    return sizes


def summarize(
    chunks: Sequence[Chunk], configured_unit: str | None = None
) -> dict[str, SizeSummary]:
    """Size summaries in characters, words and tokens, keyed by unit."""
    return {unit: describe(s, unit) for unit, s in all_sizes(chunks, configured_unit).items()}


# ---------------------------------------------------------------------- warnings


@dataclass(frozen=True)
class ChunkWarning:
    """One kind of problem, the chunks that have it and what to do about it."""

    kind: str
    title: str
    message: str
    chunks: tuple[int, ...] = field(default_factory=tuple)

    @property
    def count(self) -> int:
        return len(self.chunks)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary: kind, title, message and the chunk indices."""
        return {
            "kind": self.kind,
            "title": self.title,
            "message": self.message,
            "chunks": list(self.chunks),
        }


def warning_count(warnings: Sequence[ChunkWarning]) -> int:
    """The "Warnings" figure of every view (Explore, Compare, Corpus, the CLI, the HTML
    report): the chunks each warning names, summed over the warnings, so that 51 cuts
    inside a sentence weigh more than 2. A warning that names no chunk counts once."""
    return sum(max(1, w.count) for w in warnings)


def _listing(indices: Sequence[int]) -> str:
    shown = ", ".join(f"#{i}" for i in indices[:SHOWN_IN_MESSAGE])
    more = len(indices) - SHOWN_IN_MESSAGE
    return f"{shown} and {more} more" if more > 0 else shown


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def unit_name(unit: str) -> str:
    """A unit as a message says it: ``model`` is the embedding model's word pieces."""
    return "model word pieces" if unit == "model" else unit


def over_limit(chunks: Sequence[Chunk], limit: int | None, unit: str) -> ChunkWarning | None:
    """Chunks whose size is over ``limit``; flagged exceptions are named as such."""
    if limit is None:
        return None
    over = [c for c in chunks if c.size > limit]
    if not over:
        return None
    documented = [c for c in over if any(f.startswith("over limit:") for f in c.flags)]
    reasons = sorted({f for c in documented for f in c.flags if f.startswith("over limit:")})
    detail = (
        f" {len(documented)} of them are flagged by the strategy ({'; '.join(reasons)})."
        if documented
        else ""
    )
    return ChunkWarning(
        "over_limit",
        f"{_plural(len(over), 'chunk')} over the limit of {limit} {unit_name(unit)}",
        f"Chunks {_listing([c.index for c in over])} are larger than the limit.{detail} "
        "Raise the size, pick a finer unit or a strategy that can cut smaller.",
        tuple(c.index for c in over),
    )


def tiny_threshold(limit: int | None, unit: str) -> tuple[int, str]:
    """The size under which a chunk is tiny, and the unit it is measured in."""
    if limit is None:
        return TINY_CHARS, "chars"
    return max(1, math.ceil(limit * TINY_RATIO)), unit


def tiny_chunks(chunks: Sequence[Chunk], limit: int | None, unit: str) -> ChunkWarning | None:
    """Chunks under ``TINY_RATIO`` of the limit (or ``TINY_CHARS`` characters without one)."""
    threshold, measured_in = tiny_threshold(limit, unit)
    if measured_in == unit:
        tiny = [c.index for c in chunks if c.size < threshold]
    else:
        tiny = [c.index for c in chunks if len(c.text) < threshold]
    if not tiny:
        return None
    return ChunkWarning(
        "tiny",
        f"{_plural(len(tiny), 'tiny chunk')} (under {threshold} {unit_name(measured_in)})",
        f"Chunks {_listing(tiny)} carry little context on their own. Merge small "
        "sections (a larger size, or a strategy that merges neighbours) or drop them.",
        tuple(tiny),
    )


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def splits_word(text: str, offset: int) -> bool:
    """True when ``offset`` falls between two characters of the same word."""
    if offset <= 0 or offset >= len(text):
        return False
    return _is_word_char(text[offset - 1]) and _is_word_char(text[offset])


def _other_strategies(names: Sequence[str], current: str | None) -> str:
    """``names`` but the strategy in use, joined with "or": advice never suggests what
    the user already has."""
    left = [n for n in names if n != current]
    return " or ".join(left)


def mid_word_cuts(
    text: str, chunks: Sequence[Chunk], *, unit: str = "chars", strategy: str | None = None
) -> ChunkWarning | None:
    """Chunks that start or end in the middle of a word.

    The advice names only what would change something: a word or token unit when the
    size is counted in characters, and strategies other than ``strategy``.
    """
    cut = [c.index for c in chunks if splits_word(text, c.start) or splits_word(text, c.end)]
    if not cut:
        return None
    advice = f"Use a strategy that cuts at separators ({_other_strategies(_SEPARATING, strategy)})"
    if unit == "chars":
        advice += " or count the size in words or tokens"
    return ChunkWarning(
        "mid_word",
        f"{_plural(len(cut), 'chunk')} cut in the middle of a word",
        f"Chunks {_listing(cut)} start or end inside a word, which garbles it for "
        f"search. {advice}.",
        tuple(cut),
    )


def inside_sentence(spans: Sequence[tuple[int, int]], offset: int) -> bool:
    """True when ``offset`` falls strictly inside one of the sorted sentence ``spans``."""
    i = bisect.bisect_right(spans, (offset, math.inf)) - 1
    return i >= 0 and spans[i][0] < offset < spans[i][1]


#: How far :func:`at_element_edge` looks past whitespace for a tag.
_EDGE_WINDOW = 256


def at_element_edge(text: str, offset: int) -> bool:
    """True when ``offset`` touches a markup tag (``...>|`` or ``|  <...``): between two
    HTML elements, where the sentence splitter, reading the raw markup, sees no end."""
    before = text[max(0, offset - _EDGE_WINDOW) : offset].rstrip()
    after = text[offset : offset + _EDGE_WINDOW].lstrip()
    return before.endswith(">") or after.startswith("<")


def mid_sentence_cuts(
    chunks: Sequence[Chunk],
    sentences: Sequence[tuple[int, int]],
    *,
    strategy: str | None = None,
    text: str | None = None,
) -> ChunkWarning | None:
    """Chunks that end inside a sentence (``sentences`` from ``engine.spans``:
    ``sentence_spans`` or the shared ``document_sentences``).

    With ``text``, a cut at an element edge of HTML (:func:`at_element_edge`) does not
    count, nor does a cut between the rows of a table cut into groups (boundary
    ``"table row"``): the segmenter reads a table as one long sentence. With the
    sentence strategy itself, such a cut means a sentence longer than
    the limit, so the advice is to raise the size rather than to switch to it.
    """
    cut = [
        c.index
        for c in chunks
        if inside_sentence(sentences, c.end)
        and not (text is not None and at_element_edge(text, c.end))
        and c.metadata.get("boundary") != TABLE_ROW
    ]
    if not cut:
        return None
    if strategy == "sentence":
        advice = (
            "These sentences are longer than the size limit and were cut inside: raise "
            "the size, or add overlap so the cut sentence appears whole in one chunk."
        )
    else:
        advice = f"Try the {_other_strategies(_SEPARATING, strategy)} strategy, or add overlap."
    return ChunkWarning(
        "mid_sentence",
        f"{_plural(len(cut), 'chunk')} ending in the middle of a sentence",
        f"Chunks {_listing(cut)} stop inside a sentence, so its meaning is split "
        f"between two chunks. {advice}",
        tuple(cut),
    )


def truncated_by_model(
    indices: Sequence[int],
    max_tokens: int = DEFAULT_MODEL_MAX_TOKENS,
    model: str = DEFAULT_MODEL,
    *,
    unit: str = "chars",
) -> ChunkWarning | None:
    """Chunks over the model's input length (``indices`` from :func:`truncated_chunks`).

    The advice is in the model's own word pieces: with the ``model`` unit the size is
    already counted in them, otherwise switching to it makes the limit exact.
    """
    long = sorted(indices)
    if not long:
        return None
    fits = max_tokens - SPECIAL_TOKENS
    if unit == "model":
        advice = f"Lower the size to at most {fits} (the unit is already the model's)"
    else:
        advice = (
            f"Count the size in the model's word pieces (unit 'model', at most {fits}) or "
            "lower it (about 200 cl100k tokens fits)"
        )
    return ChunkWarning(
        "truncated",
        f"{_plural(len(long), 'chunk')} too long for {model}",
        f"Chunks {_listing(long)} have more than {max_tokens} word pieces; the "
        f"embedding model silently ignores the rest. {advice}, or embed with a model that "
        "reads more.",
        tuple(long),
    )


def too_long_for_reader(indices: Sequence[int], reader: Reader) -> ChunkWarning | None:
    """Chunks over what the chosen embedding model reads, when the sizes are counted in
    its own tokens (``reader``: its name and window in that unit; the ``model`` unit
    resolved for it, :func:`chunking.embedding.unit.follow_model`)."""
    long = sorted(indices)
    if not long:
        return None
    model, window = reader
    return ChunkWarning(
        "truncated",
        f"{_plural(len(long), 'chunk')} too long for {model}",
        f"Chunks {_listing(long)} are over the {window:,} of its own tokens that {model} "
        "reads (the unit of the sizes); the embedding model silently ignores the rest. "
        f"Lower the size to at most {window:,}, or embed with a model that reads more.",
        tuple(long),
    )


def flagged(chunks: Sequence[Chunk]) -> ChunkWarning | None:
    """Chunks carrying flags other than "over limit" (those are counted by
    :func:`over_limit`): for example another library's wrong offsets or altered text."""
    kinds: dict[str, list[int]] = {}
    for c in chunks:
        for flag in c.flags:
            if not flag.startswith("over limit:"):
                kinds.setdefault(flag.split(":", 1)[0], []).append(c.index)
    if not kinds:
        return None
    indices = sorted({i for found in kinds.values() for i in found})
    counts = "; ".join(
        f"{kind}: {_plural(len(set(found)), 'chunk')}" for kind, found in kinds.items()
    )
    return ChunkWarning(
        "flagged",
        f"{_plural(len(indices), 'chunk')} flagged",
        f"{counts} ({_listing(indices)}). Each chunk's flags say what was found (see the "
        "chunk table); its text is always the exact source slice at its offsets.",
        tuple(indices),
    )


def find_warnings(
    text: str,
    chunks: Sequence[Chunk],
    *,
    limit: int | None,
    unit: str,
    sentences: Sequence[tuple[int, int]] | None = None,
    truncated: Sequence[int] | None = None,
    max_tokens: int = DEFAULT_MODEL_MAX_TOKENS,
    strategy: str | None = None,
    reader: Reader | None = None,
) -> list[ChunkWarning]:
    """Every warning that applies; checks whose inputs are missing are skipped.

    ``strategy`` (the one that made ``chunks``) keeps the advice from suggesting it;
    ``reader`` names the model ``truncated`` is counted for when it is not the bundled
    one (:func:`too_long_for_reader`)."""
    found = [
        over_limit(chunks, limit, unit),
        flagged(chunks),
        tiny_chunks(chunks, limit, unit),
        mid_word_cuts(text, chunks, unit=unit, strategy=strategy),
    ]
    if sentences is not None:
        found.append(mid_sentence_cuts(chunks, sentences, strategy=strategy, text=text))
    if truncated is not None and reader is not None:
        found.append(too_long_for_reader(truncated, reader))
    elif truncated is not None:
        found.append(truncated_by_model(truncated, max_tokens, unit=unit))
    return _one_warning_per_set_of_chunks([w for w in found if w is not None], max_tokens, reader)


def _one_warning_per_set_of_chunks(
    warnings: list[ChunkWarning], max_tokens: int, reader: Reader | None = None
) -> list[ChunkWarning]:
    """Chunks too long for the model that are all over the limit are said once, in the
    over-limit warning (a table whose rows are over the size would otherwise be named
    twice, by two warnings listing the same chunks)."""
    over = next((w for w in warnings if w.kind == "over_limit"), None)
    long = next((w for w in warnings if w.kind == "truncated"), None)
    if over is None or long is None or not set(long.chunks) <= set(over.chunks):
        return warnings
    every = "all of them" if len(long.chunks) == len(over.chunks) else f"{long.count} of them"
    model, past = (
        (DEFAULT_MODEL, f"more than {max_tokens} word pieces")
        if reader is None
        else (reader[0], f"more than the {reader[1]:,} of its own tokens that {reader[0]} reads")
    )
    merged = ChunkWarning(
        over.kind,
        over.title,
        f"{over.message} {every.capitalize()} also {'has' if long.count == 1 else 'have'} "
        f"{past}, and {model} silently ignores the rest of such a chunk.",
        over.chunks,
    )
    return [merged if w is over else w for w in warnings if w is not long]


# --------------------------------------------------------- embedding-model tokens


@lru_cache(maxsize=1)
def model_max_tokens() -> int:
    """The bundled model's ``max_seq_length`` (256 for all-MiniLM-L6-v2)."""
    try:
        folder = model_tokenizer_path().parent
        config = json.loads((folder / "sentence_bert_config.json").read_text("utf-8"))
        return int(config["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_MODEL_MAX_TOKENS


@lru_cache(maxsize=1)
def wordpiece_tokenizer():  # -> tokenizers.Tokenizer | None
    """The bundled model's fast tokenizer (no torch), or None when it is not installed."""
    try:
        return load_hf_tokenizer(model_tokenizer_path())
    except ValueError:
        return None


def wordpiece_counts(texts: Sequence[str]) -> list[int]:
    """Word pieces per text as the embedding model counts them, ``[CLS]``/``[SEP]`` included.

    Without the bundled tokenizer, a conservative estimate: cl100k tokens x 1.5 + 2.
    """
    tokenizer = wordpiece_tokenizer()
    if tokenizer is None:
        sizer = get_sizer("tokens")
        return [math.ceil(sizer.size(t) * 1.5) + SPECIAL_TOKENS for t in texts]
    return [len(e.ids) for e in tokenizer.encode_batch(list(texts))]


def non_space_chars(text: str) -> int:
    """How many characters of ``text`` are not whitespace."""
    return sum(map(len, text.split()))


def could_exceed(text: str, max_tokens: int) -> bool:
    """False when ``text`` cannot hold more than ``max_tokens`` word pieces.

    Every word piece covers at least one non-space character, so a text with at most
    ``max_tokens - 2`` of them fits whatever the tokenizer does.
    """
    return len(text) > max_tokens - SPECIAL_TOKENS and (
        non_space_chars(text) > max_tokens - SPECIAL_TOKENS
    )


def wordpiece_starts(text: str) -> np.ndarray | None:
    """Character offset where each word piece of the whole ``text`` starts.

    One pass of the tokenizer over the document; :func:`truncated_chunks` uses it to
    estimate any chunk's count without tokenizing the chunk. None without the tokenizer.
    """
    tokenizer = wordpiece_tokenizer()
    if tokenizer is None:
        return None
    # Slices cut at spaces tokenize exactly as the whole (the model's pre-tokenizer
    # splits words at whitespace first), and a batch runs on every core.
    cuts = _space_cuts(text, _SLICE_CHARS)
    slices = [text[a:b] for a, b in itertools.pairwise(cuts)]
    encoded = tokenizer.encode_batch(slices, add_special_tokens=False)
    starts = [
        np.fromiter((start for start, _ in e.offsets), dtype=np.int64, count=len(e.offsets)) + at
        for e, at in zip(encoded, cuts, strict=False)
    ]
    return np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)


#: Characters per slice when :func:`wordpiece_starts` tokenizes a long document.
_SLICE_CHARS = 50_000


def _space_cuts(text: str, step: int) -> list[int]:
    """Offsets ``0 = c0 < c1 < ... = len(text)`` about ``step`` apart, each inner one at
    a space."""
    cuts = [0]
    while cuts[-1] + step < len(text):
        space = text.find(" ", cuts[-1] + step)
        if space < 0:
            break
        cuts.append(space)
    cuts.append(len(text))
    return cuts


def truncation_margin(max_tokens: int) -> int:
    """How far an estimate from :func:`wordpiece_starts` may be off at a split word."""
    return max(16, max_tokens // 8)


def _separates_words(ch: str) -> bool:
    """True for whitespace and punctuation: characters BERT's pre-tokenizer cuts at."""
    if ch in " \t\n\r":
        return True
    category = unicodedata.category(ch)
    return category == "Zs" or category.startswith("P") or (ch.isascii() and not ch.isalnum())


def clean_edge(text: str, offset: int) -> bool:
    """True when ``offset`` does not fall inside a word as the model's tokenizer sees it.

    The model tokenizes every word on its own, so a chunk whose two edges are clean
    has exactly the word pieces of the whole document that start inside it.
    """
    if offset <= 0 or offset >= len(text):
        return True
    return _separates_words(text[offset - 1]) or _separates_words(text[offset])


def truncated_chunks(
    text: str,
    chunks: Sequence[Chunk],
    max_tokens: int,
    piece_starts: np.ndarray | None = None,
) -> list[int]:
    """Indices of the chunks of ``text`` with more than ``max_tokens`` word pieces.

    Parents of the parent-child strategy (``metadata["children"]`` > 0) are not
    embedded, so never counted. A chunk that carries ``metadata["visible_text"]`` (HTML
    measured on its visible text) or a ``context`` (a table's header) is embedded as
    :attr:`~chunking.model.Chunk.embedding_text`, so that is what is counted. Chunks too
    short to get there are skipped (:func:`could_exceed`). With
    ``piece_starts`` of the whole document, a chunk's count is the number of pieces
    starting inside it: exact when both edges are clean (:func:`clean_edge`). A chunk
    that cuts a word is tokenized on its own unless its estimate is further than
    :func:`truncation_margin` from the limit.
    """
    # Parent-child embeds only the children; parents go to the language model.
    chunks = [c for c in chunks if not c.metadata.get("children")]
    # HTML in visible-text mode embeds each chunk's visible text, not its markup
    # (``metadata["visible_text"]``): count what the model will read.
    visible = [c for c in chunks if _reads_more(c)]
    if visible:
        counts = wordpiece_counts([c.embedding_text for c in visible])
        long = {c.index for c, n in zip(visible, counts, strict=True) if n > max_tokens}
        rest = [c for c in chunks if not _reads_more(c)]
        return sorted(long.union(truncated_chunks(text, rest, max_tokens, piece_starts)))
    candidates = [c for c in chunks if could_exceed(c.text, max_tokens)]
    if piece_starts is None:
        counts = wordpiece_counts([c.text for c in candidates])
        return [c.index for c, n in zip(candidates, counts, strict=True) if n > max_tokens]
    starts = np.fromiter((c.start for c in candidates), dtype=np.int64)
    ends = np.fromiter((c.end for c in candidates), dtype=np.int64)
    estimate = np.searchsorted(piece_starts, ends) - np.searchsorted(piece_starts, starts)
    margin = truncation_margin(max_tokens)
    over: list[int] = []
    unsure: list[Chunk] = []
    for c, n in zip(candidates, (estimate + SPECIAL_TOKENS).tolist(), strict=True):
        exact = clean_edge(text, c.start) and clean_edge(text, c.end)
        if exact or abs(n - max_tokens) > margin:
            if n > max_tokens:
                over.append(c.index)
        else:
            unsure.append(c)
    counts = wordpiece_counts([c.text for c in unsure])
    over.extend(c.index for c, n in zip(unsure, counts, strict=True) if n > max_tokens)
    return sorted(over)


def truncated_by_counts(
    chunks: Sequence[Chunk], pieces: Sequence[int], max_tokens: int
) -> list[int]:
    """:func:`truncated_chunks` from every chunk's exact word pieces (``pieces``: the
    ``model`` unit's count of each chunk's :attr:`~chunking.model.Chunk.embedding_text`,
    without ``[CLS]``/``[SEP]``, in chunk order): the chunks a model would truncate,
    parents of the parent-child strategy excepted (they are not embedded)."""
    return [
        c.index
        for c, n in zip(chunks, pieces, strict=True)
        if n + SPECIAL_TOKENS > max_tokens and not c.metadata.get("children")
    ]


# ------------------------------------------------------------------------ report


@dataclass(frozen=True)
class Report:
    """What there is to say about one chunking of a document, for the app and the CLI.

    Plain data (no chunks, no read-only mappings), so the app can cache it with
    ``st.cache_data``. Lists are per chunk, in chunk order.
    """

    #: The configuration, as :meth:`Config.to_dict` gives it.
    config: dict[str, Any]
    unit: str
    limit: int | None
    #: Every chunk's size, keyed by unit (characters, words, tokens).
    sizes: dict[str, list[int]]
    summary: dict[str, SizeSummary]
    warnings: list[ChunkWarning]
    #: Offsets where a chunk ends, the last end excepted (:func:`boundaries`).
    boundaries: list[int]
    #: Every chunk's PDF pages (:func:`~chunking.export.chunk_pages`); None if not a PDF.
    pages: list[list[int] | None]
    #: Chunks over the limit that the strategy flagged as unavoidable.
    flagged_over_limit: int

    @property
    def strategy(self) -> str:
        return str(self.config["strategy"])

    @property
    def count(self) -> int:
        return self.summary[self.unit].count

    @property
    def warning_count(self) -> int:
        """The "Warnings" figure every view shows: :func:`warning_count` of the warnings."""
        return warning_count(self.warnings)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the summary in the configured unit at the top, then the rest."""
        return {
            "strategy": self.strategy,
            **self.summary[self.unit].to_dict(),
            "limit": self.limit,
            "over_limit": self.flagged_over_limit,
            "sizes": {unit: summary.to_dict() for unit, summary in self.summary.items()},
            "warnings": [w.to_dict() for w in self.warnings],
            "config": self.config,
        }


def flagged_over_limit(chunks: Iterable[Chunk]) -> int:
    """How many chunks carry an ``"over limit: ..."`` flag (documented exceptions)."""
    return sum(1 for c in chunks if any(f.startswith("over limit:") for f in c.flags))


def make_report(
    document: Document,
    config: Config,
    chunks: Sequence[Chunk],
    *,
    sentences: Sequence[tuple[int, int]] | None = None,
    piece_starts: np.ndarray | None = None,
    reader: Reader | None = None,
    progress: Progress | None = None,
) -> Report:
    """Sizes, summaries, every warning, boundaries and pages of ``chunks`` of ``document``.

    The warnings include cuts inside a sentence and chunks the bundled embedding model
    would truncate. ``sentences`` (:func:`~chunking.engine.spans.sentence_spans`)
    depend on the text alone; without them, the document's shared ones are used
    (:func:`~chunking.engine.spans.document_sentences`: segmented once per process).

    Word pieces are counted chunk by chunk, only the chunks there are, in one batch
    through the ``model`` unit's sizer; the chunks the model would truncate follow from
    those counts (:func:`truncated_by_counts`). With ``piece_starts`` of the whole text
    (:func:`wordpiece_starts`), they come from those instead, with the same result.

    ``reader`` (the chosen model's name and window in the configuration's unit, when the
    ``model`` unit was resolved for a model other than the bundled one): the chunks it
    would truncate are those over its window in that unit.

    ``progress`` is told the share done (``done`` of :data:`~chunking.model.STEPS`) and
    what is happening: the sentence ends found so far in megabytes of the text
    (:data:`SENTENCES_SHARE` of the work, only when they are segmented here), then the
    sizes, then the warnings; it ends at the whole. The report is the same without it.
    """
    text = document.text
    max_tokens = model_max_tokens()
    if sentences is None:
        segmenting = _in_megabytes(progress, text, SENTENCES_SHARE)
        sentences = document_sentences(text, progress=segmenting)
    report_fraction(progress, SENTENCES_SHARE, "Measuring chunk sizes")
    if reader is not None:
        sizes = all_sizes(chunks, config.unit, text=text, piece_starts=piece_starts)
        truncated = [
            c.index
            for c, n in zip(chunks, sizes[config.unit], strict=True)
            if n > reader[1] and not c.metadata.get("children")
        ]
    elif piece_starts is None and wordpiece_tokenizer() is not None:
        sizes = all_sizes(chunks, config.unit)
        # The model unit's own sizes are the strategy's (``chunk.size``): count here
        # what the model reads.
        pieces = sizes["model"] if config.unit != "model" else sizes_in(chunks, "model")
        truncated = truncated_by_counts(chunks, pieces, max_tokens)
    else:
        sizes = all_sizes(chunks, config.unit, text=text, piece_starts=piece_starts)
        truncated = truncated_chunks(text, chunks, max_tokens, piece_starts)
    report_fraction(progress, SIZES_SHARE, "Finding warnings")
    warnings = find_warnings(
        text,
        chunks,
        limit=config.limit,
        unit=config.unit,
        sentences=sentences,
        truncated=truncated,
        max_tokens=max_tokens,
        strategy=config.strategy,
        reader=reader,
    )
    report = Report(
        config=config.to_dict(),
        unit=config.unit,
        limit=config.limit,
        sizes=sizes,
        summary={unit: describe(s, unit) for unit, s in sizes.items()},
        warnings=warnings,
        boundaries=boundaries(chunks),
        pages=chunk_pages(document, chunks),
        flagged_over_limit=flagged_over_limit(chunks),
    )
    report_fraction(progress, 1.0, "Done")
    return report


#: The share of :func:`make_report`'s work that segmenting a document's sentences takes
#: when they are not known yet (measured on 20 MB of prose: 51 s of 58 s), and the share
#: done once the sizes are counted too.
SENTENCES_SHARE = 0.85
SIZES_SHARE = 0.97


def _in_megabytes(progress: Progress | None, text: str, share: float) -> Progress | None:
    """A callback that takes characters of ``text`` done and tells ``progress`` the
    share of ``share`` done, with what is happening in megabytes of the text (UTF-8)."""
    if progress is None or not text:
        return progress
    mb_per_char = len(text.encode("utf-8", "surrogatepass")) / len(text) / 1e6

    def report(done: int, total: int, what: str) -> None:
        of = f"{done * mb_per_char:.1f} of {total * mb_per_char:.1f} MB"
        report_fraction(progress, share * done / max(total, 1), f"{what}: {of}")

    return report


# -------------------------------------------------------------- boundaries/agreement


def boundaries(chunks: Iterable[Chunk]) -> list[int]:
    """Sorted, distinct offsets where a chunk ends, except the last end of all."""
    ends = sorted({c.end for c in chunks})
    return ends[:-1]


def _near(sorted_points: Sequence[int], x: int, k: int) -> bool:
    i = bisect.bisect_left(sorted_points, x - k)
    return i < len(sorted_points) and sorted_points[i] <= x + k


def agreement(a: Sequence[int], b: Sequence[int], k: int) -> float:
    """Share of boundaries of both lists lying within ``k`` characters of one of the other's.

    Symmetric; 1.0 when both lists are empty (two configurations that never cut agree).
    """
    if k < 0:
        raise ValueError(f"k must be zero or more characters; got {k}")
    total = len(a) + len(b)
    if total == 0:
        return 1.0
    sa, sb = sorted(a), sorted(b)
    matched = sum(_near(sb, x, k) for x in sa) + sum(_near(sa, x, k) for x in sb)
    return matched / total


def agreement_matrix(lanes: Sequence[Sequence[int]], k: int) -> list[list[float]]:
    """Pairwise :func:`agreement` of every list of boundaries with every other."""
    return [[agreement(a, b, k) for b in lanes] for a in lanes]
