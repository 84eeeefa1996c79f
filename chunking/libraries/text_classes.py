"""The rows of the Unicode and repetition matrix: classes of text that break chunkers.

Each class is built from a few units of text, repeated or mixed
(:meth:`TextClass.build`), so that tests can draw other repetition counts and
mixtures; :attr:`TextClass.text` is the matrix's own text. The names are what export
declarations cite (:mod:`chunking.output.snippets`) and what ``docs/unicode_matrix.md``
shows (:mod:`chunking.libraries.matrix` measures the engines on them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

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
