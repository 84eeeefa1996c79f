"""PDFs as the user sees them: text with a box for every character (UI-free).

:func:`read_pdf` turns the bytes of a PDF into a :class:`PdfText`: the document text,
and for every character offset of that text the page and box it was drawn in. Boxes
are in PDF points from the top-left corner of the page *as displayed* (after the
page's ``/Rotate``), ``(x0, top, x1, bottom)``. Every non-whitespace character has a
box; whitespace implied by the layout (line breaks, a space between two words set
apart by positioning) has none.

How the text is made, page by page (pypdfium2 gives the characters and their loose
boxes in content-stream order):

1. **Line fragments.** Consecutive characters of the stream on one baseline, moving
   right with gaps under one character height, make one line fragment.
2. **Reading order.** ``order="stream"`` keeps the fragments in content-stream order.
   ``order="layout"`` (the default) looks for column gutters by a projection profile:
   an x-range at least :data:`MIN_GUTTER` wide that few fragments cover, with text
   columns (fragments filling most of the column's width) on both sides. Fragments
   crossing a gutter (a title, a figure caption) cut the page into bands; each band is
   read column by column, left column first, and a column without a gutter is read as
   rows from top to bottom (a table row's cells left to right). Every page's
   :class:`PageLayout` says how many columns were found and which lines cross a gutter.
3. **Furniture.** Running headers, footers and page numbers — lines at the top or
   bottom edge of a page that repeat on other pages once digits are replaced by ``#``
   ("Page 3 of 9" and "Page 4 of 9" are one line), and page numbers that grow with
   the page — are found, reported in :attr:`PdfText.furniture` with their boxes, and
   left out of the text unless ``keep_furniture=True``.

Lines are joined by ``"\\n"``, paragraphs, columns and bands by ``"\\n\\n"``, the cells
of one row by ``" "``; each page owns its text and the ``"\\n\\n"`` after it (the
convention of :attr:`chunking.documents.io.Document.pages`). The text, its offsets and
its boxes are the same every time the same bytes are read with the same options.

Page objects are closed as soon as their characters are read: memory holds the text
and four 32-bit floats per character, not the pages. :func:`render_page` draws one
page as a PNG with pypdfium2.
"""

from __future__ import annotations

import math
import re
import statistics
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..model import Progress

if TYPE_CHECKING:
    import pypdfium2  # type: ignore[import-untyped,unused-ignore]

Order = Literal["layout", "stream"]
ORDERS: tuple[str, ...] = ("layout", "stream")
Box = tuple[float, float, float, float]

#: The narrowest gutter between two columns, in points.
MIN_GUTTER = 6.0
#: A column's fragments must fill at least this share of its width (else: a table).
MIN_FILL = 0.4
#: Lines this far from a page's top or bottom edge (share of its height) may be furniture.
EDGE = 0.1
#: Furniture kinds, as :attr:`Furniture.kind` names them.
FURNITURE_KINDS = ("header", "footer", "page number")

_NAN = float("nan")
_DIGITS = re.compile(r"\d+")
#: A page number alone on its line: "7", "Page 7", "7 / 9", "Page 7 of 9", "- 7 -", "[7]".
_NUMBER = re.compile(
    r"[-\u2013\u2014(\[\s]*(?:page\s*)?(\d{1,5})(?:\s*(?:/|of)\s*\d+)?[-\u2013\u2014)\]\s]*",
    re.IGNORECASE,
)
#: A number at either end of an edge row: a chapter's running header that carries the
#: page number ("Chapter 3: Utilities 7", "12 Introduction").
_END_NUMBER = re.compile(r"(?:(\d{1,5})\s+\S.*)|(?:.*\S\s+(\d{1,5}))")


class PdfError(ValueError):
    """A PDF that cannot be read; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Line:
    """One line fragment of the text: its offsets ``[start, end)`` and its box."""

    page: int
    start: int
    end: int
    box: Box


@dataclass(frozen=True, slots=True)
class Furniture:
    """A running header, footer or page number found on ``page`` (1-based)."""

    page: int
    kind: str
    text: str
    box: Box


@dataclass(frozen=True, slots=True)
class PageLayout:
    """What was found on one page (1-based ``number``), in displayed points."""

    number: int
    width: float
    height: float
    rotation: int
    #: Text columns found (1 for a page without a gutter, 0 for a page without text).
    columns: int
    #: Each gutter found, as a box (its x-range over the height of the text it divides).
    gutters: tuple[Box, ...] = ()
    #: Lines that cross a gutter (read between the bands they separate): text and box.
    crossing: tuple[tuple[str, Box], ...] = ()

    @property
    def has_text(self) -> bool:
        return self.columns > 0


@dataclass(frozen=True)
class PdfText:
    """A PDF's text with a page and box for every non-whitespace character."""

    text: str
    #: Each page's ``[start, end)`` in :attr:`text` (its own text, not the separator).
    pages: tuple[tuple[int, int], ...]
    #: Every line fragment, in text order.
    lines: tuple[Line, ...]
    layouts: tuple[PageLayout, ...]
    furniture: tuple[Furniture, ...]
    order: str
    keep_furniture: bool
    #: Four floats per character of :attr:`text` (x0, top, x1, bottom); NaN for none.
    char_boxes: array[float] = field(repr=False, compare=False)

    @property
    def scanned(self) -> list[int]:
        """The pages without any text (scanned images?)."""
        return [layout.number for layout in self.layouts if not layout.has_text]

    @property
    def warnings(self) -> list[str]:
        """What the user should know about this PDF: pages without text."""
        pages = self.scanned
        if not pages:
            return []
        return [
            f"{_pages_phrase(pages)} no text layer (scanned?); only the other pages are "
            "chunked; run the file through OCR (e.g. ocrmypdf) to include them"
        ]

    def box_of(self, offset: int) -> tuple[int, Box] | None:
        """The page and box of the character at ``offset``; None for whitespace."""
        if not 0 <= offset < len(self.text):
            return None
        x0 = self.char_boxes[4 * offset]
        if math.isnan(x0):
            return None
        line = self.lines[bisect_right(self._starts, offset) - 1]
        b = self.char_boxes[4 * offset : 4 * offset + 4]
        return line.page, (b[0], b[1], b[2], b[3])

    def boxes_of(self, start: int, end: int) -> list[list[float]]:
        """The boxes of ``[start, end)``: ``[page, x0, top, x1, bottom]`` per line
        fragment it touches, each the union of the boxes of its characters in the range
        (rounded to 0.01 pt); fragments with only whitespace in the range give none."""
        boxes: list[list[float]] = []
        starts = self._starts
        first = max(bisect_right(starts, start) - 1, 0)
        last = bisect_left(starts, end)
        cb = self.char_boxes
        for line in self.lines[first:last]:
            lo, hi = max(start, line.start), min(end, line.end)
            if lo >= hi:
                continue
            if lo == line.start and hi == line.end:  # a whole fragment: its own box
                boxes.append([line.page, *line.box])
                continue
            x0 = top = math.inf
            x1 = bottom = -math.inf
            for i in range(4 * lo, 4 * hi, 4):
                a = cb[i]
                if a != a:  # NaN: whitespace
                    continue
                x0, top = min(x0, a), min(top, cb[i + 1])
                x1, bottom = max(x1, cb[i + 2]), max(bottom, cb[i + 3])
            if x0 <= x1:
                boxes.append(
                    [line.page, round(x0, 2), round(top, 2), round(x1, 2), round(bottom, 2)]
                )
        return boxes

    @property
    def _starts(self) -> list[int]:
        cached = self.__dict__.get("_line_starts")
        if cached is None:
            cached = [line.start for line in self.lines]
            self.__dict__["_line_starts"] = cached
        return cached


def _pages_phrase(pages: Sequence[int]) -> str:
    if len(pages) == 1:
        return f"page {pages[0]} has"
    shown = ", ".join(str(p) for p in pages[:20])
    more = f" and {len(pages) - 20} more" if len(pages) > 20 else ""
    return f"pages {shown}{more} have"


# ------------------------------------------------------------------------- reading


@dataclass
class _Run:
    """A line fragment while the page is read: its text, char boxes, both frames."""

    text: list[str]
    boxes: array[float]  # displayed frame, 4 per character
    frame: list[float]  # layout frame (text horizontal): x0, top, x1, bottom
    shown: list[float]  # displayed frame
    id: int = 0

    @property
    def height(self) -> float:
        return self.frame[3] - self.frame[1]


@dataclass
class _Page:
    number: int
    width: float
    height: float
    rotation: int
    layout_height: float
    runs: list[_Run]
    #: Blocks of rows of run ids in reading order.
    blocks: list[list[list[int]]]
    columns: int
    gutters: list[Box]
    crossing: list[int]
    quarter: int = 0
    user_width: float = 0.0
    user_height: float = 0.0


def read_pdf(
    data: bytes,
    name: str = "document.pdf",
    *,
    order: str = "layout",
    keep_furniture: bool = False,
    password: str | None = None,
    progress: Progress | None = None,
) -> PdfText:
    """Read the PDF ``data`` (see the module docstring); ``progress`` hears every page.

    Raises :class:`PdfError` (one line, naming ``name``) for an encrypted PDF without
    the right ``password``, a damaged file, or a PDF whose pages have no text at all.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be 'layout' or 'stream', not {order!r}")
    pdf = _open(data, name, password)
    try:
        total = len(pdf)
        pages: list[_Page] = []
        for index in range(total):
            page = pdf[index]
            try:
                pages.append(_read_page(page, index + 1, order))
            finally:
                page.close()
            if progress is not None:
                progress(index + 1, total, f"reading page {index + 1} of {total}")
    except PdfError:
        raise
    except Exception as exc:  # pdfium reports damage on any page as PdfiumError
        raise PdfError(
            f"{name} could not be read as a PDF ({type(exc).__name__}: {str(exc)[:200]}); "
            "the file may be damaged, try re-exporting it"
        ) from exc
    finally:
        pdf.close()
    if not pages or all(not p.runs for p in pages):
        count = f"any of its {total} pages" if total != 1 else "its page"
        raise PdfError(
            f"{name} has no text layer on {count} (is it a scanned document?); "
            "run it through OCR (e.g. ocrmypdf) and try again"
        )
    furniture = _find_furniture(pages)
    return _assemble(pages, furniture, order, keep_furniture)


def _open(data: bytes, name: str, password: str | None) -> pypdfium2.PdfDocument:
    import pypdfium2 as pdfium  # type: ignore[import-untyped,unused-ignore]
    import pypdfium2.raw as raw  # type: ignore[import-untyped,unused-ignore]

    try:
        return pdfium.PdfDocument(data, password=password)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code == raw.FPDF_ERR_PASSWORD:
            if password:
                raise PdfError(f"the password given for {name} is wrong") from None
            raise PdfError(
                f"{name} is password-protected (encrypted); give its password "
                "(CLI: --password) or remove the protection and try again"
            ) from None
        if code == raw.FPDF_ERR_SECURITY:
            raise PdfError(f"{name} uses an unsupported encryption; re-export it") from None
        raise PdfError(
            f"{name} could not be read as a PDF ({exc}); the file may be damaged or not "
            "a PDF, try re-exporting it"
        ) from None


def _read_page(page: Any, number: int, order: str) -> _Page:
    import ctypes

    import pypdfium2.raw as raw  # type: ignore[import-untyped,unused-ignore]

    left, bottom, right, top = page.get_bbox()
    width, height = right - left, top - bottom
    rotation = page.get_rotation() % 360
    textpage = page.get_textpage()
    handle = textpage.raw
    generated, unicode, loose_box = (
        raw.FPDFText_IsGenerated,
        raw.FPDFText_GetUnicode,
        raw.FPDFText_GetLooseCharBox,
    )
    try:
        count = raw.FPDFText_CountChars(handle)
        rect = raw.FS_RECTF()
        ref = ctypes.byref(rect)
        quarter = _text_turns(handle, count)
        shown_turns = rotation // 90
        chars: list[tuple[str, Box | None]] = []
        for k in range(count):
            if generated(handle, k):
                continue
            code = unicode(handle, k)
            if not code or code == 0xFFFE:
                continue
            ch = chr(code)
            if ch.isspace() or not ch.isprintable():
                chars.append((" ", None))
                continue
            loose_box(handle, k, ref)
            chars.append(
                (ch, (rect.left - left, top - rect.top, rect.right - left, top - rect.bottom))
            )
    finally:
        textpage.close()
    runs = _runs(chars, quarter, shown_turns, width, height)
    layout_height = width if quarter % 2 else height
    shown_width, shown_height = _turned_size(width, height, shown_turns)
    layout = _Page(
        number,
        shown_width,
        shown_height,
        rotation,
        layout_height,
        runs,
        [],
        0,
        [],
        [],
        quarter,
        width,
        height,
    )
    return layout


def _turned_size(width: float, height: float, turns: int) -> tuple[float, float]:
    return (height, width) if turns % 2 else (width, height)


def _text_turns(textpage: Any, count: int) -> int:
    """Clockwise quarter turns that make most of the page's text horizontal."""
    import pypdfium2.raw as raw  # type: ignore[import-untyped,unused-ignore]

    votes: Counter[int] = Counter()
    for k in range(0, count, max(1, count // 64)):
        angle = raw.FPDFText_GetCharAngle(textpage, k)
        if angle >= 0:
            votes[-round(angle / (math.pi / 2)) % 4] += 1  # pdfium: clockwise
    return votes.most_common(1)[0][0] if votes else 0


def _turn(box: Box, turns: int, width: float, height: float) -> Box:
    """``box`` on a ``width`` × ``height`` page turned clockwise by quarter ``turns``."""
    x0, top, x1, bottom = box
    for _ in range(turns % 4):
        x0, top, x1, bottom = height - bottom, x0, height - top, x1
        width, height = height, width
    return x0, top, x1, bottom


def _runs(
    chars: list[tuple[str, Box | None]], quarter: int, shown: int, width: float, height: float
) -> list[_Run]:
    """Cut the page's characters (stream order) into line fragments."""
    runs: list[_Run] = []
    layout_size = _turned_size(width, height, quarter)
    back = (shown - quarter) % 4  # from the layout frame to the displayed one

    def close(text: list[str], boxes: array[float], frame: list[float]) -> None:
        f = (frame[0], frame[1], frame[2], frame[3])
        shown_box = _turn(f, back, *layout_size) if back else f
        runs.append(_Run(text, boxes, frame, list(shown_box), len(runs)))

    text: list[str] = []
    boxes: array[float] = array("f")
    x0 = top = x1 = bottom = 0.0  # the open fragment's box, layout frame
    last: Box | None = None
    pending_space = False
    for ch, user_box in chars:
        if user_box is None:
            pending_space = last is not None
            continue
        frame = _turn(user_box, quarter, width, height) if quarter else user_box
        box = _turn(user_box, shown, width, height) if shown else user_box
        a0, atop, a1, abottom = frame
        if last is not None:
            height_now, height_last = abottom - atop, last[3] - last[1]
            h = max(height_now, height_last, 0.1)
            overlap = min(abottom, last[3]) - max(atop, last[1])
            gap = a0 - last[2]
            # Moving right by less than a character height; a ligature's second letter
            # shares the first one's box (it starts where the first starts).
            onward = gap >= -0.3 * h or a0 >= last[0] - 0.1 * h
            if overlap >= 0.5 * min(height_now, height_last) and onward and gap <= h:
                if pending_space or gap > 0.2 * h:
                    text.append(" ")
                    boxes.extend((_NAN, _NAN, _NAN, _NAN))
                if a0 < x0:
                    x0 = a0
                if atop < top:
                    top = atop
                if a1 > x1:
                    x1 = a1
                if abottom > bottom:
                    bottom = abottom
            else:
                close(text, boxes, [x0, top, x1, bottom])
                text, boxes = [], array("f")
                x0, top, x1, bottom = frame
        else:
            x0, top, x1, bottom = frame
        text.append(ch)
        boxes.extend(box)
        last = frame
        pending_space = False
    if last is not None:
        close(text, boxes, [x0, top, x1, bottom])
    for i, run in enumerate(runs):
        run.id = i
    return runs


# -------------------------------------------------------------------- reading order


def _order_page(page: _Page, order: str, furniture: dict[int, str], keep: bool) -> None:
    """Fill the page's blocks (rows of run ids in reading order) and its diagnostics.

    The layout is found without the page's ``furniture`` (run id -> kind); kept
    furniture is read where the stream has it, or first (headers) and last (the rest)
    in layout order.
    """
    runs = page.runs
    body = [r for r in runs if r.id not in furniture]
    layout_blocks = _layout(body, page) if body else []
    if order == "layout":
        if keep:
            top = [r for r in runs if furniture.get(r.id) == "header"]
            rest = [r for r in runs if r.id in furniture and furniture[r.id] != "header"]
            layout_blocks = [
                *([_rows(top)] if top else []),
                *layout_blocks,
                *([_rows(rest)] if rest else []),
            ]
        page.blocks = layout_blocks
        return
    rows: list[list[int]] = []
    for run in runs:
        if not keep and run.id in furniture:
            continue
        if (
            rows
            and _same_row(runs[rows[-1][-1]], run)
            and run.frame[0] >= runs[rows[-1][-1]].frame[2]
        ):
            rows[-1].append(run.id)
        else:
            rows.append([run.id])
    page.blocks = [rows]


def _same_row(a: _Run, b: _Run) -> bool:
    overlap = min(a.frame[3], b.frame[3]) - max(a.frame[1], b.frame[1])
    return overlap >= 0.5 * min(a.height, b.height)


def _layout(runs: list[_Run], page: _Page) -> list[list[list[int]]]:
    columns = 0
    heights = sorted(r.height for r in runs)
    min_gutter = max(MIN_GUTTER, 0.8 * heights[len(heights) // 2])

    def region(members: list[_Run]) -> list[list[list[int]]]:
        nonlocal columns
        found = _gutter(members, min_gutter)
        if found is None:
            columns += 1
            return [_rows(members)]
        g0, g1 = found
        left = [r for r in members if r.frame[2] <= g0]
        right = [r for r in members if r.frame[0] >= g1]
        inside = {r.id for r in left} | {r.id for r in right}
        crossing = sorted((r for r in members if r.id not in inside), key=lambda r: r.frame[1])
        tops = [min(r.frame[1] for r in members), max(r.frame[3] for r in members)]
        page.gutters.append(_turn_back(page, (g0, tops[0], g1, tops[1])))
        page.crossing.extend(r.id for r in crossing)
        blocks: list[list[list[int]]] = []
        edges = [-math.inf, *((r.frame[1] + r.frame[3]) / 2 for r in crossing), math.inf]
        for i in range(len(edges) - 1):
            lo, hi = edges[i], edges[i + 1]
            for side in (left, right):
                band = [r for r in side if lo <= (r.frame[1] + r.frame[3]) / 2 < hi]
                if band:
                    blocks.extend(region(band))
            if i < len(crossing):
                blocks.append([[crossing[i].id]])
        return blocks

    blocks = region(runs)
    page.columns = columns if not page.gutters else len(page.gutters) + 1
    return blocks


def _turn_back(page: _Page, frame: Box) -> Box:
    """A layout-frame box in the displayed frame (for the diagnostics)."""
    turns = (page.rotation // 90 - page.quarter) % 4
    if not turns:
        return _box(frame)
    width, height = _turned_size(page.user_width, page.user_height, page.quarter)
    return _box(_turn(frame, turns, width, height))


def _gutter(runs: list[_Run], min_gutter: float) -> tuple[float, float] | None:
    """The widest column gutter among ``runs`` (layout frame), or None.

    The coverage of every x (how many fragments reach it) is counted. In each stretch
    that at most a few fragments cover, the fragments over the middle of its lowest
    part cross it (a title); the gutter is the space between the fragments left and
    right of that point, if it is wide enough and both sides are text columns.
    """
    if len(runs) < 6:
        return None
    lo = math.floor(min(r.frame[0] for r in runs))
    hi = math.ceil(max(r.frame[2] for r in runs))
    size = hi - lo
    diff = [0] * (size + 2)
    for r in runs:
        diff[math.floor(r.frame[0]) - lo] += 1
        diff[math.ceil(r.frame[2]) - lo] -= 1
    coverage: list[int] = []
    covered = 0
    for x in range(size):
        covered += diff[x]
        coverage.append(covered)
    allowance = max(2, len(runs) // 8)
    candidates: list[tuple[float, float]] = []  # middles: of the lowest part, of all
    x = 1
    while x < size:
        if coverage[x] > allowance:
            x += 1
            continue
        end = x
        while end < size and coverage[end] <= allowance:
            end += 1
        if end < size:  # text on the right too
            floor = min(coverage[x:end])
            best = (0, x, x)
            k = x
            while k < end:
                if coverage[k] == floor:
                    j = k
                    while j < end and coverage[j] == floor:
                        j += 1
                    best = max(best, (j - k, k, j))
                    k = j
                else:
                    k += 1
            candidates.append(((best[1] + best[2]) / 2, (x + end) / 2))
        x = end
    found: list[tuple[float, float, float]] = []
    for middle, stretch in candidates:
        for cut in sorted({lo + middle, lo + stretch}):
            left = [r for r in runs if r.frame[2] <= cut]
            right = [r for r in runs if r.frame[0] >= cut]
            if len(left) < 3 or len(right) < 3:
                continue
            g0, g1 = max(r.frame[2] for r in left), min(r.frame[0] for r in right)
            edge = min(r.frame[0] for r in left)
            # A fragment over the cut that starts at the left column's edge and stops short
            # of the right column is a long line of the left column, not a crossing.
            long_line = any(
                abs(r.frame[0] - edge) <= 2 and r.frame[2] < g1
                for r in runs
                if r.frame[0] < cut < r.frame[2]
            )
            if not long_line and g1 - g0 >= min_gutter and _fills(left) and _fills(right):
                found.append((g1 - g0, g0, g1))
    if not found:
        return None
    _, g0, g1 = max(found)
    return g0, g1


def _fills(runs: list[_Run]) -> bool:
    """Whether ``runs`` look like a text column (lines fill it) rather than table cells."""
    span = max(r.frame[2] for r in runs) - min(r.frame[0] for r in runs)
    widths = statistics.median(r.frame[2] - r.frame[0] for r in runs)
    return span > 0 and widths >= MIN_FILL * span


def _rows(runs: list[_Run]) -> list[list[int]]:
    """Runs as rows top to bottom, each row's runs left to right."""
    rows: list[list[_Run]] = []
    for run in sorted(runs, key=lambda r: (r.frame[1], r.frame[0])):
        if rows and _same_row(rows[-1][0], run):
            rows[-1].append(run)
        else:
            rows.append([run])
    return [[r.id for r in sorted(row, key=lambda r: r.frame[0])] for row in rows]


# ------------------------------------------------------------------------ furniture


def _edge_rows(page: _Page) -> list[tuple[str, int, list[int]]]:
    """The first and last two rows of the page near its edges: ("top"/"bottom", how
    far from the edge (0 or 1), run ids)."""
    if not page.runs:
        return []
    rows = _rows(page.runs)
    found: list[tuple[str, int, list[int]]] = []
    limit = EDGE * page.layout_height
    for depth, row in enumerate(rows[:2]):
        if max(page.runs[i].frame[3] for i in row) <= limit:
            found.append(("top", depth, row))
    for depth, row in enumerate(reversed(rows[-2:])):
        low = min(page.runs[i].frame[1] for i in row)
        if low >= page.layout_height - limit and all(row != r for _, _, r in found):
            found.append(("bottom", depth, row))
    return found


def _row_text(page: _Page, row: list[int]) -> str:
    return " ".join("".join(page.runs[i].text) for i in row)


def _find_furniture(pages: list[_Page]) -> dict[int, dict[int, str]]:
    """``{page number: {run id: kind}}`` for every run that is page furniture.

    An edge row is furniture when its text, digits as ``#``, is at the same edge of at
    least a quarter of the pages with text (and two), or when it is a page number that
    grows with the page on two pages or more — alone on its row, or at either end of a
    row whose words change with the chapter ("Chapter 3: Utilities 7"). The second row
    from an edge counts only under a first row that is furniture.
    """
    keyed: list[tuple[_Page, str, int, list[int], str]] = []
    counts: Counter[tuple[str, int, str]] = Counter()
    offsets: Counter[int] = Counter()
    for page in pages:
        seen: set[tuple[str, int, str]] = set()
        for edge, depth, row in _edge_rows(page):
            text = " ".join(_row_text(page, row).split())
            key = (edge, depth, _DIGITS.sub("#", text.lower()))
            keyed.append((page, edge, depth, row, text))
            if key not in seen:
                seen.add(key)
                counts[key] += 1
            number = _page_number(text)
            if number is not None:
                offsets[number - page.number] += 1
    with_text = sum(1 for p in pages if p.runs)
    needed = max(2, math.ceil(0.25 * with_text))
    found: dict[int, dict[int, str]] = {}
    first: set[tuple[int, str]] = set()  # (page, edge) whose first row is furniture
    for page, edge, depth, row, text in sorted(keyed, key=lambda k: k[2]):
        if depth and (page.number, edge) not in first:
            continue
        number = _page_number(text)
        counting = number is not None and offsets[number - page.number] >= 2
        if counts[(edge, depth, _DIGITS.sub("#", text.lower()))] >= needed or counting:
            alone = _NUMBER.fullmatch(text) is not None
            kind = "page number" if alone else ("header" if edge == "top" else "footer")
            for i in row:
                found.setdefault(page.number, {})[i] = kind
            first.add((page.number, edge))
    return found


# ------------------------------------------------------------------------- assembly


def _page_number(text: str) -> int | None:
    """The number an edge row may carry as the page's number: the row itself ("7",
    "Page 7 of 9"), or a number at one of its ends ("Chapter 3: Utilities 7")."""
    alone = _NUMBER.fullmatch(text)
    if alone:
        return int(alone.group(1))
    end = _END_NUMBER.fullmatch(text)
    if end:
        return int(end.group(1) or end.group(2))
    return None


def _assemble(
    pages: list[_Page], furniture: dict[int, dict[int, str]], order: str, keep: bool
) -> PdfText:
    parts: list[str] = []
    boxes: array[float] = array("f")
    lines: list[Line] = []
    spans: list[tuple[int, int]] = []
    layouts: list[PageLayout] = []
    found: list[Furniture] = []
    offset = 0

    def put(text: str, char_boxes: array[float] | None = None) -> None:
        nonlocal offset
        parts.append(text)
        if char_boxes is None:
            boxes.extend([_NAN] * (4 * len(text)))
        else:
            boxes.extend(char_boxes)
        offset += len(text)

    for number, page in enumerate(pages, 1):
        if number > 1:
            put("\n\n")
        begin = offset
        own = furniture.get(page.number, {})
        for run in page.runs:
            kind = own.get(run.id)
            if kind is not None:
                found.append(Furniture(page.number, kind, "".join(run.text), _box(run.shown)))
        _order_page(page, order, own, keep)
        previous: _Run | None = None
        for block in page.blocks:
            block_start = True
            for row in block:
                kept = [page.runs[i] for i in row]
                if previous is not None:
                    paragraph = block_start or _paragraph_gap(previous, kept[0])
                    put("\n\n" if paragraph else "\n")
                block_start = False
                for k, run in enumerate(kept):
                    if k:
                        put(" ")
                    text = "".join(run.text)
                    lines.append(Line(page.number, offset, offset + len(text), _box(run.shown)))
                    put(text, run.boxes)
                previous = kept[-1]
        spans.append((begin, offset))
        crossing = tuple(
            ("".join(page.runs[i].text), _box(page.runs[i].shown))
            for i in page.crossing
            if i not in own
        )
        layouts.append(
            PageLayout(
                page.number,
                page.width,
                page.height,
                page.rotation,
                page.columns,
                tuple(page.gutters),
                crossing,
            )
        )
        page.runs = []  # free the characters as soon as they are in the text
    return PdfText(
        text="".join(parts),
        pages=tuple(spans),
        lines=tuple(lines),
        layouts=tuple(layouts),
        furniture=tuple(found),
        order=order,
        keep_furniture=keep,
        char_boxes=boxes,
    )


def _box(values: Sequence[float]) -> Box:
    return (round(values[0], 2), round(values[1], 2), round(values[2], 2), round(values[3], 2))


def _paragraph_gap(previous: _Run, run: _Run) -> bool:
    """A vertical gap over 0.7 line heights between two rows: a new paragraph."""
    gap = run.frame[1] - previous.frame[3]
    return gap > 0.7 * max(previous.height, run.height) or run.frame[3] < previous.frame[1]


# -------------------------------------------------------------------------- images


def render_page(
    data: bytes, page: int, *, scale: float = 1.5, password: str | None = None
) -> bytes:
    """The 1-based ``page`` of the PDF ``data`` drawn as PNG bytes, ``scale`` pixels
    per point (as displayed, rotation applied). Raises :class:`PdfError`."""
    import io

    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    pdf = _open(data, "the PDF", password)
    try:
        if not 1 <= page <= len(pdf):
            raise PdfError(f"the PDF has {len(pdf)} pages; there is no page {page}")
        handle = pdf[page - 1]
        try:
            image = handle.render(scale=scale).to_pil()
        finally:
            handle.close()
    finally:
        pdf.close()
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
