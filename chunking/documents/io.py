"""Read documents from files or bytes into plain text (UI-free).

Both the Streamlit app and the CLI go through :func:`read_path` or :func:`read_bytes`.
Every problem is reported as a :class:`DocumentError` whose message names the file and
says what to do about it.

The returned :attr:`Document.text` is the text *as read*: line endings are not
normalised and markup is not stripped, so chunk offsets always refer to this exact
string. Only a leading byte-order mark is removed.

PDF and DOCX have no text of their own: their text is extracted, and offsets refer to
the extracted text. A PDF is read by :func:`chunking.documents.pdf.read_pdf`: its
text in layout (or stream) order, without page furniture unless kept, and a box for
every non-whitespace character (:attr:`Document.pdf`, :meth:`Document.boxes_of`).

In a DOCX, paragraphs styled as headings ("Title", "Heading 1" to
"Heading 9", or a style based on one) become Markdown ATX headings in that text:
``"# Title"``, ``"## Heading 2"`` (levels over 6 count as 6), so that the
Markdown-aware strategies (markdown, hierarchy, the recommender) see the document's
structure with exact offsets. A DOCX table becomes a Markdown table: its header rows
(those Word repeats on each page, else the first, and the rows a merged header cell
reaches), a ``| --- |`` line, then one line per row; a merged cell's text appears once,
``|`` in a cell is escaped and its line breaks become spaces.

CSV and TSV files (``.csv``, ``.tsv``, or text that reads as one, see
:func:`chunking.splitters.table.looks_delimited`) are documents of kind ``csv``, for
the ``table`` strategy.
"""

from __future__ import annotations

import bisect
import codecs
import io
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from ..model import Chunk, Progress
from ..splitters.table import looks_delimited
from .pdf import PdfError, PdfText, read_pdf

if TYPE_CHECKING:
    from docx.styles.style import BaseStyle
    from docx.table import Table
    from docx.text.paragraph import Paragraph

MAX_BYTES_DEFAULT = 50 * 1024 * 1024

_CODE_LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".java": "java",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".hpp": "cpp",
}

SUPPORTED_EXTENSIONS: dict[str, str] = {
    ".txt": "text",
    ".csv": "csv",
    ".tsv": "csv",
    ".rst": "text",
    ".log": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".json": "json",
    **dict.fromkeys(_CODE_LANGUAGES, "code"),
    ".pdf": "pdf",
    ".docx": "docx",
}

# Byte-order marks, longest first: the UTF-32 LE mark starts with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Control characters (Unicode category Cc) except those that legitimately occur in
# text files: tab, line feed, vertical tab, form feed, carriage return, ESC (coloured logs).
_SUSPICIOUS_CONTROLS = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
# More than this share of other control characters means "binary, not text".
_MAX_CONTROL_RATIO = 0.02


class DocumentError(ValueError):
    """A document that cannot be read; the message says what to do."""


@dataclass(frozen=True)
class Document:
    """The text of one document plus what is known about where it came from."""

    text: str
    name: str
    kind: str
    encoding: str | None
    pages: tuple[tuple[int, int], ...] = ()
    language: str | None = None
    #: How sure the reader is of ``encoding``, from 0 to 1 (1: a byte-order mark, valid
    #: UTF-8, or the encoding the user named); None for PDF and DOCX.
    encoding_confidence: float | None = None
    #: Why the encoding is uncertain, for the user (None when it is not).
    encoding_warning: str | None = None
    #: A PDF's layout: a box for every character, reading order, furniture, pages.
    pdf: PdfText | None = field(default=None, compare=False, repr=False)

    def describe(self, separator: str = " · ") -> str:
        """One line about the document: name, kind, size, encoding (with how sure its
        detection is), pages: ``notes.txt · text · 1,234 characters · cp1252 (confidence
        50%)``."""
        parts = [self.name, self.kind, f"{len(self.text):,} characters"]
        if self.encoding:
            confidence = self.encoding_confidence
            sure = "" if confidence is None else f" (confidence {confidence:.0%})"
            parts.append(f"{self.encoding}{sure}")
        if self.pages:
            parts.append(f"{len(self.pages)} pages")
        return separator.join(parts)

    def page_of(self, offset: int) -> int | None:
        """1-based page number containing the character ``offset``; None if not a PDF.

        Each page owns its own text and the ``"\\n\\n"`` separator that follows it;
        ``offset == len(text)`` belongs to the last page. Offsets outside the text
        give None.
        """
        if not self.pages or offset < 0 or offset > len(self.text):
            return None
        return bisect.bisect_right(self._page_starts, offset)

    @cached_property
    def _page_starts(self) -> list[int]:
        return [start for start, _ in self.pages]

    def pages_of(self, start: int, end: int) -> list[int]:
        """Every 1-based page number the span ``[start, end)`` touches; [] if not a PDF.

        This is the one form of page numbers in exports: ``metadata["pages"]``.
        """
        first = self.page_of(start)
        last = self.page_of(max(start, end - 1))
        if first is None or last is None:
            return []
        return list(range(first, last + 1))

    def boxes_of(self, start: int, end: int) -> list[list[float]]:
        """The boxes of the span ``[start, end)`` of a PDF, ``[page, x0, top, x1,
        bottom]`` in points from the page's top-left corner, one per line fragment
        (:meth:`chunking.documents.pdf.PdfText.boxes_of`); [] if not a PDF.

        This is the one form of boxes in exports: ``metadata["boxes"]``.
        """
        return self.pdf.boxes_of(start, end) if self.pdf is not None else []

    def with_pages(self, chunks: Iterable[Chunk]) -> list[Chunk]:
        """The chunks, each with ``metadata["pages"]`` (:meth:`pages_of`) for a PDF, and
        ``metadata["boxes"]`` (:meth:`boxes_of`) when its characters have boxes."""
        if not self.pages:
            return list(chunks)
        located = []
        for c in chunks:
            extra: dict[str, Any] = {"pages": self.pages_of(c.start, c.end)}
            if self.pdf is not None:
                extra["boxes"] = self.boxes_of(c.start, c.end)
            located.append(replace(c, metadata={**c.metadata, **extra}))
        return located


# --------------------------------------------------------------------------- public


def read_path(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_BYTES_DEFAULT,
    encoding: str | None = None,
    **pdf_options: Any,
) -> Document:
    """Read the file at ``path``; its size is checked before anything is read.

    ``encoding`` overrides the detection for text files, ``pdf_options`` are passed on
    for a PDF (see :func:`read_bytes`).
    """
    _check_limit(max_bytes)
    name = PurePath(os.fspath(path)).name or os.fspath(path)
    try:
        size = os.stat(path).st_size
        if os.path.isdir(path):
            raise DocumentError(f"{name} is a folder, not a file; pick a file inside it")
        _check_size(size, name, max_bytes)
        _kind_for(name)  # fail on an unsupported extension before reading
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError as exc:
        raise DocumentError(f"{name} was not found; check the path ({os.fspath(path)})") from exc
    except PermissionError as exc:
        raise DocumentError(f"{name} cannot be opened: permission denied") from exc
    except OSError as exc:
        raise DocumentError(f"{name} cannot be read: {exc.strerror or exc}") from exc
    return read_bytes(data, name, max_bytes=max_bytes, encoding=encoding, **pdf_options)


def read_bytes(
    data: bytes,
    name: str,
    *,
    max_bytes: int = MAX_BYTES_DEFAULT,
    encoding: str | None = None,
    pdf_order: str = "layout",
    keep_furniture: bool = False,
    password: str | None = None,
    progress: Progress | None = None,
) -> Document:
    """Turn the raw bytes of a file called ``name`` into a :class:`Document`.

    Text is decoded with ``encoding`` when given (a byte-order mark is still removed),
    otherwise detected (see :func:`_decode_text`); the document says which encoding was
    used, how sure the detection is, and why when it is unsure.

    A PDF is read in ``pdf_order`` (``"layout"`` or ``"stream"``), its running headers,
    footers and page numbers left out unless ``keep_furniture``, opened with
    ``password`` when it is encrypted; ``progress`` hears every page.
    """
    _check_limit(max_bytes)
    name = PurePath(name).name or name
    _check_size(len(data), name, max_bytes)
    kind = _kind_for(name)
    if kind == "pdf":
        return _read_pdf(data, name, pdf_order, keep_furniture, password, progress)
    if kind == "docx":
        return _read_docx(data, name)
    decoded = _decode_as(data, name, encoding) if encoding else _decode_text(data, name)
    text = decoded.text
    if kind == "json" and not _is_json(text):
        kind = "text"
    if kind == "text" and looks_delimited(text):
        kind = "csv"
    language = _CODE_LANGUAGES.get(_extension(name)) if kind == "code" else None
    return Document(
        text=text,
        name=name,
        kind=kind,
        encoding=decoded.encoding,
        language=language,
        encoding_confidence=decoded.confidence,
        encoding_warning=decoded.warning,
    )


# --------------------------------------------------------------------- decoding


@dataclass(frozen=True)
class Decoded:
    """Decoded text, the encoding used, how sure that is (0 to 1) and why not, if not."""

    text: str
    encoding: str
    confidence: float = 1.0
    warning: str | None = None


def _decode_text(data: bytes, name: str) -> Decoded:
    """Decode text bytes; a leading BOM is removed.

    Order: byte-order marks, BOM-less UTF-16, strict UTF-8, then the single-byte and
    legacy code pages (:func:`_decode_guessed`). Binary data and whitespace-only text
    raise :class:`DocumentError`.
    """
    decoded = _decode_with_bom(data, name) or _decode_utf16_without_bom(data)
    if decoded is None:
        if b"\x00" in data:
            raise _binary(name)
        decoded = _decode_utf8(data) or _decode_guessed(data, name)
    _check_text(decoded.text, name)
    return decoded


def _decode_as(data: bytes, name: str, encoding: str) -> Decoded:
    """Decode with the encoding the user named (a matching byte-order mark is dropped)."""
    try:
        codec = codecs.lookup(encoding)
    except LookupError:
        raise DocumentError(
            f"unknown encoding {encoding!r}; use a Python codec name such as utf-8, "
            "cp1252, latin-1, cp1251 or cp1250"
        ) from None
    for bom, bom_encoding in _BOMS:
        if data.startswith(bom) and codecs.lookup(bom_encoding).name.startswith(codec.name):
            data = data[len(bom) :]
            break
    try:
        text = data.decode(codec.name)
    except UnicodeDecodeError as exc:
        raise DocumentError(
            f"{name} is not valid {encoding} (byte {exc.start} is "
            f"{data[exc.start : exc.start + 1]!r}); choose another encoding or let it be detected"
        ) from None
    _check_text(text, name)
    return Decoded(text, codec.name, 1.0)


def _check_text(text: str, name: str) -> None:
    if _looks_binary(text):
        raise _binary(name)
    if not text.strip():
        raise DocumentError(f"{name} contains only whitespace; there is nothing to chunk")


# ----------------------------------------------------------------------- checks


def _check_limit(max_bytes: int) -> None:
    if max_bytes <= 0:
        raise ValueError(f"max_bytes must be positive, got {max_bytes}")


def _check_size(size: int, name: str, max_bytes: int) -> None:
    if size == 0:
        raise DocumentError(f"{name} is empty (0 bytes); choose a file that contains text")
    if size > max_bytes:
        shown, limit = format_size(size), format_size(max_bytes)
        if shown == limit:
            shown = f"{size:,} bytes"
            limit = f"{max_bytes:,}-byte"
        raise DocumentError(
            f"{name} is {shown}, over the {limit} limit; "
            "split it into smaller files or raise the limit (the command line's "
            "--max-mb; the app's CHUNK_EXPLORER_MAX_MB, set where it is started)"
        )


def format_size(size: int) -> str:
    """Human-readable size: ``'61.2 MB'``, ``'50 MB'``, ``'12 KB'``, ``'100 bytes'``."""
    for unit, factor in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size >= factor:
            return f"{size / factor:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


def _extension(name: str) -> str:
    return PurePath(name).suffix.lower()


def _kind_for(name: str) -> str:
    """The document kind for a file name, or DocumentError for unsupported extensions."""
    extension = _extension(name)
    if not extension:
        return "text"
    if extension not in SUPPORTED_EXTENSIONS:
        supported = ", ".join(sorted(SUPPORTED_EXTENSIONS))
        raise DocumentError(
            f"{name} has the unsupported extension {extension}; supported: {supported}. "
            "If it is plain text, rename it to .txt"
        )
    return SUPPORTED_EXTENSIONS[extension]


def _binary(name: str) -> DocumentError:
    return DocumentError(
        f"{name} looks like a binary file, not text; convert it to text, PDF or DOCX first"
    )


def _looks_binary(text: str) -> bool:
    """True when too many characters are control characters (binary data)."""
    controls = sum(1 for _ in _SUSPICIOUS_CONTROLS.finditer(text))
    return controls > _MAX_CONTROL_RATIO * len(text)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _decode_with_bom(data: bytes, name: str) -> Decoded | None:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data[len(bom) :].decode(encoding), encoding)
            except UnicodeDecodeError as exc:
                raise DocumentError(
                    f"{name} starts with a {encoding} byte-order mark but is not valid "
                    f"{encoding} (byte {exc.start + len(bom)}); re-save it as UTF-8"
                ) from exc
    return None


def _decode_utf16_without_bom(data: bytes) -> Decoded | None:
    """Recognise BOM-less UTF-16 by its zero bytes in every other position."""
    if len(data) < 4 or len(data) % 2:
        return None
    half = len(data) // 2
    zeros_even = data[0::2].count(0)
    zeros_odd = data[1::2].count(0)
    for zeros, other, encoding in (
        (zeros_odd, zeros_even, "utf-16-le"),
        (zeros_even, zeros_odd, "utf-16-be"),
    ):
        if zeros >= 0.3 * half and other <= 0.02 * half:
            try:
                return Decoded(data.decode(encoding), encoding, 0.9)
            except UnicodeDecodeError:
                return None
    return None


def _decode_utf8(data: bytes) -> Decoded | None:
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        return None


def _decode_guessed(data: bytes, name: str) -> Decoded:
    """Decode bytes that are neither UTF-8 nor UTF-16: a single-byte code page, or a
    multi-byte legacy encoding found by charset-normalizer.

    On short or repetitive text charset-normalizer cannot tell the single-byte code
    pages apart (French Latin-1 comes out as Baltic cp1257: "Élève" as "Élčve"). So
    every Windows code page that decodes the bytes is scored by how well its non-ASCII
    letters fit the alphabet of one language (:func:`_alphabet_fit`); the best fit
    wins, cp1252 (Western, by far the most common) wins ties, and when another code
    page that gives a different text fits almost as well the document says so in
    ``warning`` with a lower ``confidence``.
    """
    fits: list[tuple[float, int, str, str]] = []
    for rank, encoding in enumerate(_SINGLE_BYTE):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        fits.append((_alphabet_fit(text), -rank, encoding, text))
    fits.sort(reverse=True)
    if fits and fits[0][0] >= _MIN_FIT:
        best_fit, _, encoding, text = fits[0]
        rivals = [f for f in fits[1:] if f[3] != text]
        if rivals and best_fit - rivals[0][0] < _CLEAR_MARGIN:
            rival = rivals[0][2]
            warning = (
                f"the encoding is uncertain: decoded as {encoding}, but {rival} would also "
                f"give plausible text; if accented letters look wrong, choose the encoding"
            )
            confidence = round(min(best_fit, 0.5), 2)
            return Decoded(text, encoding, confidence, warning)
        return Decoded(text, encoding, round(best_fit, 2))
    return _decode_multibyte(data, name)


def _decode_multibyte(data: bytes, name: str) -> Decoded:
    """charset-normalizer's best guess, for legacy multi-byte encodings (Shift-JIS...)."""
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise _binary(name)
    confidence = round(max(0.0, 1.0 - best.chaos), 2)
    warning = None
    if confidence < 0.9:
        warning = (
            f"the encoding is uncertain: guessed {best.encoding} "
            f"(confidence {confidence:.0%}); if the text looks wrong, choose the encoding"
        )
    return Decoded(str(best), best.encoding, confidence, warning)


#: Single-byte code pages tried, Western first (it wins ties).
_SINGLE_BYTE = ("cp1252", "cp1250", "cp1251", "cp1257", "cp1254", "cp1253", "cp1255", "cp1256")
#: Below this fit no single-byte reading is plausible: try multi-byte encodings.
_MIN_FIT = 0.6
#: A fit this much better than every differently decoded rival is a clear win.
_CLEAR_MARGIN = 0.15

_CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
#: The non-ASCII letters (lower case) of the languages written in those code pages.
_ALPHABETS: dict[str, frozenset[str]] = {
    name: frozenset(letters)
    for name, letters in {
        "French": "àâæçéèêëîïôœùûüÿ",
        "German": "äöüß",
        "Spanish": "áéíñóúü",
        "Portuguese": "áâãàçéêíóôõú",
        "Italian": "àèéìíîòóùú",
        "Dutch": "áéèëïóöü",
        "Danish/Norwegian": "æøåé",
        "Swedish/Finnish": "åäöé",
        "Icelandic": "áðéíóúýþæö",
        "Czech": "áčďéěíňóřšťúůýž",
        "Slovak": "áäčďéíĺľňóôŕšťúýž",
        "Polish": "ąćęłńóśźż",
        "Hungarian": "áéíóöőúüű",
        "Croatian/Slovenian": "čćđšž",
        "Romanian": "ăâîșțşţ",
        "Lithuanian": "ąčęėįšųūž",
        "Latvian": "āčēģīķļņšūž",
        "Estonian": "äöõüšž",
        "Turkish": "çğıöşüâî",
        "Russian": _CYRILLIC,
        "Ukrainian": _CYRILLIC + "єіїґ",
        "Serbian/Macedonian/Bulgarian": _CYRILLIC + "ђјљњћџѓќѕ",
        "Greek": "αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋΐΰς",
        "Hebrew": "אבגדהוזחטיכלמנסעפצקרשתךםןףץ",
        "Arabic": "ءآأؤإئابةتثجحخدذرزسشصضطظعغفقكلمنهوىي",
    }.items()
}
_NON_LATIN = frozenset().union(
    *(
        _ALPHABETS[n]
        for n in ("Ukrainian", "Serbian/Macedonian/Bulgarian", "Greek", "Hebrew", "Arabic")
    )
)
#: Non-ASCII characters that are at home in text of any of those languages.
_NEUTRAL = frozenset("\u00a0’‘“”„‚–—…«»‹›¿¡€£¥¢°·•©®™§×÷½¼¾²³µ")


def _alphabet_fit(text: str) -> float:
    """How well the non-ASCII characters of ``text`` fit one language, from 0 to 1.

    The share of its non-ASCII letters and stray symbols that belong to the alphabet of
    the single best-fitting language; typographic punctuation counts for nothing. A
    letter of another script glued to a Latin letter (``"йcole"``, Latin-1 read as
    cp1251) fits no language.
    """
    counts: dict[str, int] = {}
    for i, ch in enumerate(text):
        if ch < "\x80" or ch in _NEUTRAL:
            continue
        lower = ch.lower()
        if lower in _NON_LATIN and (_ascii_letter(text, i - 1) or _ascii_letter(text, i + 1)):
            lower = "mixed scripts"
        counts[lower] = counts.get(lower, 0) + 1
    total = sum(counts.values())
    if total == 0:
        return 1.0
    return (
        max(
            sum(n for ch, n in counts.items() if ch in alphabet) for alphabet in _ALPHABETS.values()
        )
        / total
    )


def _ascii_letter(text: str, i: int) -> bool:
    return 0 <= i < len(text) and text[i].isascii() and text[i].isalpha()


# ------------------------------------------------------------------ PDF and DOCX


def _read_pdf(
    data: bytes,
    name: str,
    order: str,
    keep_furniture: bool,
    password: str | None,
    progress: Progress | None,
) -> Document:
    """The PDF's text with its boxes (:func:`chunking.documents.pdf.read_pdf`); pages
    are joined by a blank line."""
    try:
        layout = read_pdf(
            data,
            name,
            order=order,
            keep_furniture=keep_furniture,
            password=password,
            progress=progress,
        )
    except PdfError as exc:
        raise DocumentError(str(exc)) from None
    return Document(
        text=layout.text,
        name=name,
        kind="pdf",
        encoding=None,
        pages=layout.pages,
        pdf=layout,
    )


def _read_docx(data: bytes, name: str) -> Document:
    """Paragraph and table text in document order, blocks joined by a blank line;
    headings as Markdown headings (see the module docstring)."""
    blocks = _docx_blocks(data, name)
    if not blocks:
        raise DocumentError(f"{name} contains no text; nothing to chunk")
    return Document(text="\n\n".join(blocks), name=name, kind="docx", encoding=None)


def _docx_blocks(data: bytes, name: str) -> list[str]:
    """The text of every paragraph and table that has some, in document order."""
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        blocks = [
            _table_text(item) if isinstance(item, Table) else _paragraph_text(item)
            for item in document.iter_inner_content()
        ]
    except Exception as exc:  # python-docx raises zip, XML and key errors on damage
        raise DocumentError(
            f"{name} could not be read as a Word document ({type(exc).__name__}); "
            "the file may be damaged or not a real .docx, try re-saving it from Word"
        ) from exc
    return [block for block in blocks if block.strip()]


_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.IGNORECASE)
#: Styles followed up their ``based on`` chain before giving up (Word allows cycles
#: in damaged files).
_STYLE_DEPTH = 8


def _heading_level(style: BaseStyle | None) -> int | None:
    """The Markdown level of a paragraph style: 1 for "Title" and "Heading 1", N for
    "Heading N" (at most 6), the level of the style it is based on for a custom style,
    None for any other."""
    for _ in range(_STYLE_DEPTH):
        if style is None:
            return None
        names = (style.name or "", style.style_id or "")
        if any(n.lower() == "title" for n in names):
            return 1
        for n in names:
            match = _HEADING_STYLE.fullmatch(n.strip())
            if match:
                return min(int(match.group(1)), 6)
        style = getattr(style, "base_style", None)  # only paragraph styles have one
    return None


def _paragraph_text(paragraph: Paragraph) -> str:
    """A paragraph's text; a heading's on one line after ``#`` marks of its level."""
    level = _heading_level(paragraph.style)
    if level is None or not paragraph.text.strip():
        return paragraph.text
    return f"{'#' * level} {' '.join(paragraph.text.split())}"


def _table_text(table: Table) -> str:
    """The table as a Markdown table (see the module docstring); "" when it is empty."""
    grid = [[cell._tc for cell in row.cells] for row in table.rows]
    texts = [[_cell_text(cell.text) for cell in row.cells] for row in table.rows]
    head = 0
    while head < len(grid) and _repeated_header(table.rows[head]):
        head += 1
    head = max(head, 1)
    k = 0
    while k < min(head, len(grid) - 1):  # a merged cell reaching the next row: a header row
        if any(a is b for a, b in zip(grid[k], grid[k + 1], strict=False)):
            head = max(head, k + 2)
        k += 1
    lines = []
    width = max((len(row) for row in grid), default=0)
    for r, row in enumerate(grid):
        cells = [
            ""
            if (c and row[c - 1] is tc) or (r and c < len(grid[r - 1]) and grid[r - 1][c] is tc)
            else texts[r][c]
            for c, tc in enumerate(row)
        ]
        if r < head or any(cells):
            lines.append("| " + " | ".join(cells + [""] * (width - len(cells))) + " |")
        if r == min(head, len(grid)) - 1:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines) if any(any(row) for row in texts) else ""


def _cell_text(text: str) -> str:
    """A cell's text on one Markdown table line: ``|`` escaped, line breaks as spaces."""
    return " ".join(text.replace("|", "\\|").split())


def _repeated_header(row: Any) -> bool:
    """Whether Word repeats ``row`` (a python-docx row) at the top of each page."""
    properties = row._tr.trPr
    return properties is not None and any(
        child.tag.endswith("}tblHeader") and child.get(_W_VAL, "true") not in ("0", "false")
        for child in properties
    )


_W_VAL = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}val"
