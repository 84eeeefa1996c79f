"""The Unicode and repetition matrix: what each library engine does to which text.

Rows are classes of text that break chunkers (:data:`TEXT_CLASSES`), each built from a
few units of text repeated or mixed (:meth:`TextClass.build`, so that tests can draw
other repetition counts and mixtures); :func:`measure` runs one engine on one text and
reports the matrix's columns (:data:`COLUMNS`):

- ``offsets exact or flagged``: how many chunks the library placed or wrote other than
  its own offsets and text say (every chunk is still the exact source slice; these
  are flagged, see :mod:`.align`);
- ``text left out (true amount)``: non-whitespace characters that no chunk covers,
  counted on the chunks themselves (placed in order, so only what no consistent
  placement covers);
- ``over-limit chunks``: chunks larger than the engine's own limit, measured in its
  unit;
- ``U+FFFD in library output``: chunks whose library text holds more U+FFFD than the
  source slice (a character cut between tokens and decoded in halves);
- ``byte-vs-character offset confusion``: chunks whose wrong reported offset is the
  UTF-8 byte offset (or the UTF-16 code-unit offset) of where the text really is;
- ``time``: seconds for the library and the alignment together.

``bench/unicode_matrix.py`` writes the table published as ``docs/unicode_matrix.md``;
``tests/test_unicode_matrix.py`` checks every cell's promises. Export snippets
declared exact name the rows they are not exact on by these rows' names
(:mod:`chunking.output.snippets`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .align import BROKEN, flag_kind

REPEATED_PARAGRAPH: Final = "repeated paragraph"
REPEATED_SENTENCE: Final = "repeated sentence without paragraph breaks"
CJK: Final = "CJK without spaces"
EMOJI: Final = "ZWJ emoji and flags"
COMBINING: Final = "combining accents"
RTL: Final = "Arabic/Hebrew"
CRLF: Final = "CRLF"
BOM: Final = "a BOM"
TABS_NBSP: Final = "tabs and NBSP"
ONE_MB_LINE: Final = "a 1 MB single line"

COLUMNS: Final = (
    "offsets exact or flagged",
    "text left out (true amount)",
    "over-limit chunks",
    "U+FFFD in library output",
    "byte-vs-character offset confusion",
    "time",
)


@dataclass(frozen=True)
class TextClass:
    """One row: a kind of text, built from ``units`` joined by ``joiner``."""

    name: str
    units: tuple[str, ...]
    #: How many units the matrix's own text has (cycled in order).
    repeats: int
    joiner: str = ""
    prefix: str = ""

    def build(self, picks: Sequence[int] | None = None) -> str:
        """The text: ``prefix``, then the units at ``picks`` (indices, taken modulo
        the number of units) joined; by default :attr:`repeats` units in order."""
        if picks is None:
            picks = range(self.repeats)
        return self.prefix + self.joiner.join(self.units[i % len(self.units)] for i in picks)

    @property
    def text(self) -> str:
        return self.build()


_PARAGRAPH = (
    "The licensee may renew this agreement each year by written notice sent to the "
    "licensor at least ninety days earlier.\n\n"
)
_SENTENCES = (
    "The service restarted after the scheduled update and resumed normal operation. ",
    "No requests were lost while the service restarted. ",
)
_CJK = (
    "東京は日本の首都であり、人口が最も多い都市です。",
    "我们今天下午去图书馆看书，然后一起吃晚饭。",
    "한국어문장도띄어쓰기없이이어집니다。",
)
_EMOJI = (
    "Team 👩🏽\u200d💻 shipped the release 🚀 today. ",
    "Family trip 👨\u200d👩\u200d👧\u200d👦 to 🇯🇵 and 🇫🇷 with 🏳️\u200d🌈 flags. ",
    "Thumbs 👍🏿 and a kiss 👩\u200d❤️\u200d💋\u200d👨 for everyone. ",
)
_COMBINING = (
    "Cafe\u0301 au lait, cre\u0300me bru\u0302le\u0301e et re\u0301sume\u0301 nai\u0308f. ",
    "Tie\u0302\u0301ng Vie\u0323\u0302t co\u0301 nhie\u0302\u0300u da\u0302\u0301u. ",
    "Z\u0327\u0301a\u0308\u0323l\u0336g\u0301o\u0303 text stacks marks. ",
)
_RTL = (
    "مرحبا بالعالم، هذه جملة عربية قصيرة عن الطقس اليوم. ",
    "שלום עולם, זה משפט קצר בעברית על מזג האוויר. ",
    "الرقم 42 والنسبة 3.5٪ داخل النص. ",
)
_CRLF = (
    "The first line of a Windows file.\r\n",
    "The second line ends the paragraph.\r\n\r\n",
    "A new paragraph begins on this line.\r\n",
)
_PLAIN = (
    "A document saved by a text editor that writes a byte order mark. ",
    "Its first character is U+FEFF, which is not whitespace.\n\n",
)
_TABS = (
    "Name:\tWidget\u00a0A\tWeight:\u00a0100\u00a0kg\n",
    "Price:\t12\u202f500\u00a0EUR\tStock:\t\u00a07\u00a0units\n",
    "\tIndented\u00a0\u00a0line with\u2007figure\u2007space\n",
)

#: The rows of the matrix, in the order of the published table.
TEXT_CLASSES: Final = (
    TextClass(REPEATED_PARAGRAPH, (_PARAGRAPH,), 60),
    TextClass(REPEATED_SENTENCE, _SENTENCES, 90),
    TextClass(CJK, _CJK, 90),
    TextClass(EMOJI, _EMOJI, 90),
    TextClass(COMBINING, _COMBINING, 90),
    TextClass(RTL, _RTL, 90),
    TextClass(CRLF, _CRLF, 120),
    TextClass(BOM, _PLAIN, 80, prefix="\ufeff"),
    TextClass(TABS_NBSP, _TABS, 120),
    TextClass(
        ONE_MB_LINE,
        tuple(u.strip() for u in (*_SENTENCES, *_CJK, *_EMOJI, *_COMBINING, *_RTL)),
        25_000,
        joiner=" ",
    ),
)
ROW_NAMES: Final = tuple(row.name for row in TEXT_CLASSES)


def text_class(name: str) -> TextClass:
    """The row called ``name``."""
    for row in TEXT_CLASSES:
        if row.name == name:
            return row
    raise ValueError(f"unknown text class {name!r}; choose one of: {', '.join(ROW_NAMES)}")


# --- measuring one engine on one text ----------------------------------------------------

#: Flags that say a chunk is not where, or not what, the library said.
_PLACEMENT_KINDS = (
    "library offset wrong",
    "library offset missing",
    "text altered",
    "text not found",
)


@dataclass
class Cell:
    """One engine on one text: the matrix's columns, and what they are made of."""

    chunks: int = 0
    #: Chunks per placement flag kind (offset wrong or missing, text altered or not found).
    flagged: Counter[str] = field(default_factory=Counter)
    flagged_chunks: int = 0
    left_out: int = 0
    #: Non-whitespace characters inside the ranges the chunks flag as left out.
    left_out_flagged: int = 0
    over_limit: int = 0
    replacement: int = 0
    #: Chunks whose reported offset is a UTF-8 byte (or UTF-16 unit) offset.
    byte_offsets: int = 0
    seconds: float = 0.0
    #: Why the engine did not run here (a one-line message), else ``None``.
    error: str | None = None

    def row(self) -> dict[str, str]:
        """The cell as the matrix's columns, in words."""
        if self.error is not None:
            return {c: "not run" if c == COLUMNS[0] else "-" for c in COLUMNS}
        if self.flagged_chunks:
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.flagged.items()))
            offsets = f"{self.flagged_chunks} of {self.chunks} flagged ({kinds})"
        else:
            offsets = f"exact ({self.chunks} chunks)"
        return {
            COLUMNS[0]: offsets,
            COLUMNS[1]: f"{self.left_out:,}" if self.left_out else "0",
            COLUMNS[2]: str(self.over_limit),
            COLUMNS[3]: str(self.replacement),
            COLUMNS[4]: str(self.byte_offsets),
            COLUMNS[5]: f"{self.seconds:.2f} s",
        }


def engine_params(name: str) -> dict[str, Any]:
    """The matrix's configuration of an engine: its defaults, with a size limit small
    enough for several chunks per text (128 tokens or 512 of another unit, an eighth of
    it overlapping) and the fast fake embedder for the semantic ones (the offsets do not
    depend on the model)."""
    from ..config import get_strategy

    spec = get_strategy(name)
    params: dict[str, Any] = {}
    if "model" in spec.param_names:
        params["model"] = "hash"
    if spec.limit_param:
        unit = spec.param("unit").default if "unit" in spec.param_names else "chars"
        limit = 128 if unit == "tokens" else 512
        params[spec.limit_param] = limit
        for overlap in ("chunk_overlap", "overlap"):
            if overlap in spec.param_names and spec.param(overlap).default:
                params[overlap] = limit // 8
    if name == "llamaindex.hierarchical":
        params["chunk_sizes"] = "512,128"
        params["chunk_overlap"] = 16
    return params


def measure(name: str, text: str, params: dict[str, Any] | None = None) -> Cell:
    """Run engine ``name`` (with ``params``, by default :func:`engine_params`) on
    ``text`` and fill the matrix's columns."""
    from ..config import Config
    from ..core import run

    config = Config.create(name, **(engine_params(name) if params is None else params))
    started = time.perf_counter()
    try:
        chunks = run(text, config)
    except ValueError as exc:
        return Cell(error=str(exc), seconds=time.perf_counter() - started)
    cell = Cell(chunks=len(chunks), seconds=time.perf_counter() - started)
    for c in chunks:
        kinds = {flag_kind(f) for f in c.flags}
        placement = sorted(k for k in kinds if k.startswith(_PLACEMENT_KINDS))
        cell.flagged.update(placement)
        cell.flagged_chunks += bool(placement)
        cell.over_limit += any(k.startswith("over limit") for k in kinds)
        library_text = c.metadata.get("library_text", c.text)
        cell.replacement += library_text.count(BROKEN) > c.text.count(BROKEN)
        cell.byte_offsets += _offset_in_other_units(text, c.start, c.metadata.get("library_start"))
    cell.left_out = _uncovered(text, [(c.start, c.end) for c in chunks])
    declared = [(a, b) for c in chunks for a, b in c.metadata.get("left_out", ())]
    cell.left_out_flagged = _solid(text, declared)
    return cell


def _offset_in_other_units(text: str, start: int, reported: Any) -> bool:
    """Whether a wrong reported offset counts UTF-8 bytes or UTF-16 units up to the
    chunk's true start."""
    if not isinstance(reported, int) or reported == start or reported < 0:
        return False
    before = text[:start]
    return reported in (len(before.encode("utf-8")), len(before.encode("utf-16-le")) // 2)


def _uncovered(text: str, spans: Sequence[tuple[int, int]]) -> int:
    """Non-whitespace characters of ``text`` outside every span."""
    covered = _merge(spans)
    total = sum(not ch.isspace() for ch in text)
    return total - sum(sum(not ch.isspace() for ch in text[a:b]) for a, b in covered)


def _solid(text: str, spans: Sequence[tuple[int, int]]) -> int:
    """Non-whitespace characters inside the union of ``spans``."""
    return sum(sum(not ch.isspace() for ch in text[a:b]) for a, b in _merge(spans))


def _merge(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def engines() -> list[str]:
    """Every library engine, in the order users see them."""
    from . import LIBRARIES

    return [spec.name for spec in LIBRARIES]


def matrix(
    names: Sequence[str] | None = None,
    rows: Sequence[TextClass] = TEXT_CLASSES,
    progress: Callable[[str, str], None] | None = None,
) -> dict[str, dict[str, Cell]]:
    """Every engine (or ``names``) on every row's text: engine -> row name -> cell."""
    out: dict[str, dict[str, Cell]] = {}
    for name in names or engines():
        out[name] = {}
        for row in rows:
            if progress is not None:
                progress(name, row.name)
            out[name][row.name] = measure(name, row.text)
    return out
