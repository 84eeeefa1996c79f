"""PDFs as the user sees them (chunking.documents.pdf): text with a box for every
character, layout reading order, furniture, bad input. Every PDF is made here with
fpdf2; the boxes are checked against pdfplumber's own character list."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from collections.abc import Sequence

import pdfplumber
import pytest
from fpdf import FPDF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chunking
from chunking.documents.io import DocumentError, read_bytes
from chunking.documents.pdf import PdfError, PdfText, read_pdf, render_page
from chunking.output.export import chunk_pages, chunk_records, to_csv, to_jsonl, to_parquet

# ------------------------------------------------------------------ PDFs made here

LEFT = [
    ["Alpha one starts the left column", "alpha two keeps going on", "alpha three ends A."],
    ["Beta one opens paragraph B", "beta two closes it off."],
]
RIGHT = [
    ["Gamma one starts the right column", "gamma two keeps going on", "gamma three ends C."],
    ["Delta one opens paragraph D", "delta two closes it off."],
]


def _new(font_size: float = 10) -> FPDF:
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_font("Helvetica", size=font_size)
    pdf.set_auto_page_break(False)
    return pdf


def _column_lines(paragraphs: list[list[str]]) -> list[str]:
    """A column's lines, an empty line between paragraphs."""
    lines: list[str] = []
    for paragraph in paragraphs:
        if lines:
            lines.append("")
        lines.extend(paragraph)
    return lines


def two_columns(title: str | None = "A Study of Two Columns") -> bytes:
    """One page, two columns; the content stream interleaves them line by line."""
    pdf = _new()
    pdf.add_page()
    if title:
        pdf.text(200, 60, title)
    left, right = _column_lines(LEFT), _column_lines(RIGHT)
    for i, (a, b) in enumerate(zip(left, right, strict=True)):
        y = 100 + 14 * i
        if a:
            pdf.text(50, y, a)
        if b:
            pdf.text(320, y, b)
    return bytes(pdf.output())


def with_furniture(pages: int = 4, bare_numbers: bool = False) -> bytes:
    """Pages with a running header, a footer with the page number, distinct bodies."""
    pdf = _new()
    for p in range(1, pages + 1):
        pdf.add_page()
        pdf.text(200, 40, "Annual Report 2024 - Chunk Explorer")
        for i in range(5):
            pdf.text(72, 120 + 14 * i, f"Body line {i} of page {p} says word{p * 10 + i}.")
        pdf.text(280, 810, str(p) if bare_numbers else f"Page {p} of {pages}")
    return bytes(pdf.output())


SENTENCES = [
    "Chunking decides what a retriever can find.",
    "A boundary in the middle of an answer splits it in two.",
    "Overlap repeats the edge of each chunk in the next.",
    "Columns read across the page mix unrelated lines.",
    "Headers and page numbers are not part of the text.",
    "Every character keeps its page and its box.",
]


def two_column_report(pages: int = 2) -> bytes:
    """Pages of two interleaved columns of paragraphs, a running header and numbers."""
    pdf = _new(9)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.text(230, 40, "Chunking Quarterly - Volume 3")
        columns: list[list[str]] = [[], []]
        for side, column in enumerate(columns):
            for paragraph in range(4):
                if column:
                    column.append("")
                for line in range(5):
                    k = (number * 7 + side * 3 + paragraph * 5 + line) % len(SENTENCES)
                    column.append(f"{SENTENCES[k]} ({number}.{side}.{paragraph}.{line})")
        for i, (a, b) in enumerate(zip(*columns, strict=True)):
            y = 90 + 13 * i
            if a:
                pdf.text(45, y, a)
            if b:
                pdf.text(315, y, b)
        pdf.text(290, 815, f"- {number} -")
    return bytes(pdf.output())


def test_columns_and_furniture_together() -> None:
    read = read_pdf(two_column_report(2))
    assert [layout.columns for layout in read.layouts] == [2, 2]
    assert "Chunking Quarterly" not in read.text
    kinds = sorted((f.page, f.kind, f.text) for f in read.furniture)
    header = "Chunking Quarterly - Volume 3"
    assert kinds == [
        (1, "header", header),
        (1, "page number", "- 1 -"),
        (2, "header", header),
        (2, "page number", "- 2 -"),
    ]
    first_page = read.text[slice(*read.pages[0])]
    paragraphs = [p for p in first_page.split("\n\n") if p.strip()]
    assert len(paragraphs) == 8
    for k, paragraph in enumerate(paragraphs):
        side, number = divmod(k, 4)
        tags = re.findall(r"\((\d)\.(\d)\.(\d)\.(\d)\)", paragraph)
        assert tags == [("1", str(side), str(number), str(line)) for line in range(5)]


def table_pdf() -> bytes:
    pdf = _new()
    pdf.add_page()
    with pdf.table() as table:
        for cells in [("Name", "Age", "City"), ("Alice", "30", "Paris"), ("Bob", "41", "Oslo")]:
            row = table.row()
            for cell in cells:
                row.cell(cell)
    return bytes(pdf.output())


def pages_pdf(pages: Sequence[Sequence[str]], font_size: float = 11) -> bytes:
    """One line of text per entry, one page per list of lines."""
    pdf = _new(font_size)
    for lines in pages:
        pdf.add_page()
        for i, line in enumerate(lines):
            pdf.text(72, 100 + (font_size + 5) * i, line)
    return bytes(pdf.output())


def _rotate_first_page(data: bytes, degrees: int) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.pages[0].rotate(degrees)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _image_png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (60, 40), (90, 120, 200)).save(out, format="PNG")
    return out.getvalue()


# ------------------------------------------------------------- checks on the boxes


def _plumber_chars(data: bytes) -> dict[int, list[dict[str, float | str]]]:
    """pdfplumber's non-whitespace characters per 1-based page."""
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return {
            number: [
                {k: c[k] for k in ("text", "x0", "x1", "top", "bottom")}
                for c in page.chars
                if c["text"].strip()
            ]
            for number, page in enumerate(pdf.pages, 1)
        }


def _inside(char: dict[str, float | str], boxes: list[list[float]], page: int) -> bool:
    cx = (float(char["x0"]) + float(char["x1"])) / 2
    cy = (float(char["top"]) + float(char["bottom"])) / 2
    return any(b[0] == page and b[1] <= cx <= b[3] and b[2] <= cy <= b[4] for b in boxes)


def _chars_in(
    boxes: list[list[float]], plumber: dict[int, list[dict[str, float | str]]]
) -> Counter[str]:
    return Counter(
        str(c["text"]) for page, chars in plumber.items() for c in chars if _inside(c, boxes, page)
    )


def _visible(text: str) -> Counter[str]:
    return Counter(ch for ch in text if not ch.isspace())


# -------------------------------------------------------------------- reading order


def test_the_stream_really_interleaves_the_columns() -> None:
    data = two_columns()
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        stream = "".join(c["text"] for c in pdf.pages[0].chars)
    assert stream.index("Gamma one") < stream.index("alpha two")
    streamed = read_pdf(data, order="stream").text
    assert streamed.index("Gamma one") < streamed.index("alpha two")


def test_layout_order_reads_each_paragraph_whole_column_by_column() -> None:
    pdf = read_pdf(two_columns())
    paragraphs = [p for p in pdf.text.split("\n\n") if p.strip()]
    expected = ["A Study of Two Columns", *("\n".join(p) for p in LEFT + RIGHT)]
    assert paragraphs == expected
    (layout,) = pdf.layouts
    assert layout.columns == 2
    assert len(layout.gutters) == 1
    gutter = layout.gutters[0]
    assert 185 < gutter[0] < 200 and 319 < gutter[2] <= 320.5
    assert [text for text, _ in layout.crossing] == ["A Study of Two Columns"]


def test_single_column_and_table_are_not_split_into_columns() -> None:
    pdf = read_pdf(table_pdf())
    assert pdf.layouts[0].columns == 1
    rows = [line for line in pdf.text.splitlines() if line.strip()]
    assert rows == ["Name Age City", "Alice 30 Paris", "Bob 41 Oslo"]


def test_text_offsets_and_boxes_are_stable() -> None:
    data = two_columns()
    first, second = read_pdf(data), read_pdf(data)
    assert first.text == second.text
    assert first.lines == second.lines
    assert first.char_boxes.tobytes() == second.char_boxes.tobytes()


# ------------------------------------------------------------------------ furniture


def test_running_headers_and_page_numbers_are_left_out_and_reported() -> None:
    pdf = read_pdf(with_furniture(4))
    assert "Annual Report" not in pdf.text
    assert re.search(r"Page \d of 4", pdf.text) is None
    assert "Body line 0 of page 3" in pdf.text
    kinds = Counter(f.kind for f in pdf.furniture)
    assert kinds == {"header": 4, "page number": 4}
    footers = sorted((f.page, f.text) for f in pdf.furniture if f.kind == "page number")
    assert footers == [(p, f"Page {p} of 4") for p in range(1, 5)]
    for item in pdf.furniture:
        x0, top, x1, bottom = item.box
        assert 0 <= x0 < x1 <= 595.3 and 0 <= top < bottom <= 841.9
        assert (top < 100) == (item.kind == "header")


def test_the_toggle_keeps_furniture_in_the_text() -> None:
    kept = read_pdf(with_furniture(3), keep_furniture=True)
    assert kept.text.count("Annual Report 2024") == 3
    assert "Page 2 of 3" in kept.text
    assert len(kept.furniture) == 6  # still reported, for the page view
    assert kept.text.index("Annual Report") < kept.text.index("Body line 0 of page 1")


def test_bare_incrementing_page_numbers_are_furniture() -> None:
    pdf = read_pdf(with_furniture(3, bare_numbers=True))
    assert sorted((f.page, f.text) for f in pdf.furniture if f.kind == "page number") == [
        (1, "1"),
        (2, "2"),
        (3, "3"),
    ]
    assert not re.search(r"(?m)^\d$", pdf.text)


def test_chapter_headers_that_carry_the_page_number_are_furniture() -> None:
    # As in a GNU manual: the header names the chapter and ends with the printed page
    # number (the page's number minus the front matter), so no header repeats on a
    # quarter of the pages; the number growing with the page gives it away.
    chapters = ["Chapter 1: Preface", "Chapter 2: Using it", "Chapter 3: Utilities"]
    pdf = _new()
    for p in range(1, 9):
        pdf.add_page()
        pdf.text(72, 40, f"{chapters[(p - 1) // 3]} {p + 4}")
        for i in range(3):
            pdf.text(72, 120 + 14 * i, f"Body line {i} of page {p} about topic {p * 7 + i}.")
    data = bytes(pdf.output())
    found = read_pdf(data)
    headers = sorted((f.page, f.text) for f in found.furniture if f.kind == "header")
    assert headers == [(p, f"{chapters[(p - 1) // 3]} {p + 4}") for p in range(1, 9)]
    assert "Chapter" not in found.text
    assert "Body line 1 of page 5 about topic 36." in found.text
    kept = read_pdf(data, keep_furniture=True)
    assert kept.text.count("Chapter 3: Utilities") == 2


def test_a_number_at_the_end_of_a_few_top_lines_is_not_enough() -> None:
    # Body lines that happen to end in a number, without a page-number rhythm, stay.
    words = ["apples", "rivers", "engines", "stars"]
    pdf = _new()
    for n, word in enumerate(words, start=1):
        pdf.add_page()
        pdf.text(72, 40, f"Counting {word} gives {n * 11}")
        pdf.text(72, 120, f"Text of page {n} about topic {n * 5}.")
    found = read_pdf(bytes(pdf.output()))
    assert found.furniture == ()
    assert "Counting rivers gives 22" in found.text


def test_a_single_page_has_no_furniture() -> None:
    pdf = read_pdf(pages_pdf([["Title of the page", "Some text", "Page 1"]]))
    assert pdf.furniture == ()
    assert "Page 1" in pdf.text


# --------------------------------------------------------------------------- boxes


def test_every_visible_character_has_a_box_and_whitespace_none() -> None:
    data = two_columns()
    pdf = read_pdf(data)
    for offset, ch in enumerate(pdf.text):
        located = pdf.box_of(offset)
        assert (located is None) == ch.isspace(), (offset, ch)
    plumber = _plumber_chars(data)
    assert len(plumber[1]) == sum(1 for ch in pdf.text if not ch.isspace())


def test_a_rotated_page_gives_boxes_on_the_page_as_displayed() -> None:
    data = _rotate_first_page(pages_pdf([["Turned page text here"], ["Upright page"]]), 90)
    pdf = read_pdf(data)
    assert pdf.text.split("\n\n") == ["Turned page text here", "Upright page"]
    first = pdf.layouts[0]
    assert first.rotation == 90
    assert first.width == pytest.approx(841.89, abs=0.1)
    assert first.height == pytest.approx(595.28, abs=0.1)
    (box,) = pdf.boxes_of(0, len("Turned"))
    assert box[0] == 1 and box[3] - box[1] < box[4] - box[2]  # vertical on screen
    assert _chars_in(pdf.boxes_of(0, len("Turned")), _plumber_chars(data)) == _visible("Turned")


def test_sideways_text_on_an_upright_page_reads_in_order() -> None:
    pdf = _new(12)
    pdf.add_page()
    with pdf.rotation(90, 300, 500):
        pdf.text(300, 500, "Sideways words read upward")
    text = read_pdf(bytes(pdf.output())).text
    assert text == "Sideways words read upward"


def test_pages_of_mixed_sizes() -> None:
    pdf = _new()
    pdf.add_page()
    pdf.text(72, 100, "Portrait page")
    pdf.add_page(format=(400, 200))
    pdf.text(30, 60, "Small landscape page")
    data = bytes(pdf.output())
    read = read_pdf(data)
    sizes = [(round(p.width), round(p.height)) for p in read.layouts]
    assert sizes == [(595, 842), (400, 200)]
    start, _ = read.pages[1]
    (box,) = read.boxes_of(start, start + len("Small"))
    assert box[0] == 2 and box[3] <= 400 and box[4] <= 200


def test_a_chunk_crossing_a_page_break_has_boxes_on_both_pages() -> None:
    data = pages_pdf([["End of the first page"], ["Start of the second page"]])
    doc = read_bytes(data, "two.pdf")
    start = doc.text.index("first")
    end = doc.text.index("second") + len("second")
    (chunk,) = doc.with_pages([chunking.Chunk(0, start, end, doc.text[start:end], 5)])
    assert chunk.metadata["pages"] == [1, 2]
    boxes = chunk.metadata["boxes"]
    assert [b[0] for b in boxes] == [1, 2]
    assert _chars_in(boxes, _plumber_chars(data)) == _visible(chunk.text)


def cjk_pdf(text: str) -> bytes:
    """One line of Chinese in Adobe's standard STSong-Light font, not embedded, by its
    Unicode CMap (UniGB-UCS2-H): readers decode it without a font file (this machine
    has no CJK font for fpdf2 to embed)."""
    code = "".join(f"{ord(ch):04X}" for ch in text)
    content = f"BT /F1 16 Tf 72 700 Td <{code}> Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H "
        b"/DescendantFonts [6 0 R] >>",
        b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light /CIDSystemInfo "
        b"<< /Registry (Adobe) /Ordering (GB1) /Supplement 4 >> /FontDescriptor 7 0 R "
        b"/DW 1000 >>",
        b"<< /Type /FontDescriptor /FontName /STSong-Light /Flags 6 "
        b"/FontBBox [-25 -254 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 "
        b"/CapHeight 880 /StemV 93 >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)


def test_cjk_text_has_a_box_for_every_character() -> None:
    data = cjk_pdf("分块浏览器 读取文本")
    read = read_pdf(data)
    assert read.text == "分块浏览器 读取文本"
    plumber = _plumber_chars(data)
    assert "".join(str(c["text"]) for c in plumber[1]) == "分块浏览器读取文本"
    for start in range(len(read.text)):
        for end in range(start, len(read.text) + 1):
            boxes = read.boxes_of(start, end)
            assert _chars_in(boxes, plumber) == _visible(read.text[start:end])
    (box,) = read.boxes_of(0, 2)
    assert box == [1, 72.0, pytest.approx(77.92, abs=0.5), 104.0, pytest.approx(93.92, abs=0.5)]


# --------------------------------------------------------------------------- property

WORDS = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789.,;", min_size=1, max_size=9
)


@st.composite
def documents(draw: st.DrawFn) -> tuple[list[list[str]], float]:
    size = draw(st.sampled_from([8.0, 10.0, 12.0]))
    pages = draw(
        st.lists(
            st.lists(
                st.lists(WORDS, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=12
            ),
            min_size=1,
            max_size=3,
        )
    )
    return pages, size


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=documents(), data=st.data())
def test_a_chunks_boxes_hold_exactly_its_visible_characters(
    document: tuple[list[list[str]], float], data: st.DataObject
) -> None:
    pages, size = document
    raw = pages_pdf(pages, size)
    pdf = read_pdf(raw, keep_furniture=True)
    plumber = _plumber_chars(raw)
    every = Counter(str(c["text"]) for chars in plumber.values() for c in chars)
    assert every == _visible(pdf.text)
    chunk_size = data.draw(st.integers(min_value=5, max_value=200), label="size")
    chunks = chunking.chunk(pdf.text, "recursive", size=chunk_size, unit="chars")
    for chunk in chunks:
        boxes = pdf.boxes_of(chunk.start, chunk.end)
        assert _chars_in(boxes, plumber) == _visible(chunk.text), chunk
    start = data.draw(st.integers(min_value=0, max_value=len(pdf.text)), label="start")
    end = data.draw(st.integers(min_value=start, max_value=len(pdf.text)), label="end")
    assert _chars_in(pdf.boxes_of(start, end), plumber) == _visible(pdf.text[start:end])


# ------------------------------------------------------------------------- bad input


def test_encrypted_pdf_says_so_and_opens_with_its_password() -> None:
    pdf = _new()
    pdf.set_encryption(owner_password="owner", user_password="hunter2")
    pdf.add_page()
    pdf.text(72, 100, "Secret text")
    data = bytes(pdf.output())
    with pytest.raises(DocumentError, match=r"^locked\.pdf is password-protected.*--password"):
        read_bytes(data, "locked.pdf")
    with pytest.raises(DocumentError, match=r"password given for locked\.pdf is wrong"):
        read_bytes(data, "locked.pdf", password="nope")
    assert read_bytes(data, "locked.pdf", password="hunter2").text == "Secret text"


@pytest.mark.parametrize("keep", [0.2, 0.5, 0.9])
def test_a_damaged_pdf_is_one_clear_error(keep: float) -> None:
    data = with_furniture(2)
    with pytest.raises(DocumentError, match=r"^cut\.pdf could not be read as a PDF.*damaged"):
        read_bytes(data[: int(len(data) * keep)], "cut.pdf")


def test_scanned_pages_are_named_with_ocr_advice() -> None:
    pdf = _new()
    pdf.add_page()
    pdf.text(72, 100, "A page with text")
    pdf.add_page()
    pdf.image(io.BytesIO(_image_png()), x=50, y=50, w=300)
    data = bytes(pdf.output())
    read = read_pdf(data)
    assert read.scanned == [2]
    (warning,) = read.warnings
    assert warning.startswith("page 2 has no text layer") and "OCR" in warning
    only_images = _new()
    only_images.add_page()
    only_images.image(io.BytesIO(_image_png()), x=50, y=50, w=300)
    with pytest.raises(PdfError, match=r"^scan\.pdf has no text layer on its page.*OCR"):
        read_pdf(bytes(only_images.output()), "scan.pdf")


def test_many_pages_report_progress_page_by_page() -> None:
    seen: list[tuple[int, int]] = []
    data = pages_pdf([[f"Page body {i}"] for i in range(30)])
    read = read_pdf(data, progress=lambda done, total, what: seen.append((done, total)))
    assert seen == [(i, 30) for i in range(1, 31)]
    assert len(read.pages) == 30


def test_order_must_be_layout_or_stream() -> None:
    with pytest.raises(ValueError, match="layout"):
        read_pdf(two_columns(), order="columns")


# ------------------------------------------------------------- exports and images


def test_boxes_travel_in_every_export_format() -> None:
    doc = read_bytes(with_furniture(2), "report.pdf")
    chunks = chunking.chunk(doc.text, "recursive", size=60)
    records = chunk_records(chunks, chunk_pages(doc, chunks))
    for row, chunk in zip(records, chunks, strict=True):
        assert row["metadata"]["boxes"] == doc.boxes_of(chunk.start, chunk.end)
        assert row["metadata"]["pages"] == doc.pages_of(chunk.start, chunk.end)
        assert row["metadata"]["boxes"]
    jsonl = [json.loads(line) for line in to_jsonl(records).splitlines()]
    assert [r["metadata"]["boxes"] for r in jsonl] == [r["metadata"]["boxes"] for r in records]
    import csv

    rows = list(csv.DictReader(io.StringIO(to_csv(records), newline="")))
    assert [json.loads(r["metadata"])["boxes"] for r in rows] == [
        r["metadata"]["boxes"] for r in records
    ]
    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(to_parquet(records)))
    assert [json.loads(m)["boxes"] for m in table.column("metadata").to_pylist()] == [
        r["metadata"]["boxes"] for r in records
    ]


def test_a_text_file_has_no_boxes() -> None:
    doc = read_bytes(b"plain words here", "a.txt")
    chunks = chunking.chunk(doc.text)
    assert doc.boxes_of(0, 5) == []
    assert "boxes" not in chunk_records(chunks, chunk_pages(doc, chunks))[0]["metadata"]


def test_render_page_draws_a_png_at_the_scale() -> None:
    from PIL import Image

    png = render_page(two_columns(), 1, scale=0.5)
    assert png.startswith(b"\x89PNG")
    image = Image.open(io.BytesIO(png))
    width, height = image.size
    assert abs(width - 595.28 * 0.5) <= 1 and abs(height - 841.89 * 0.5) <= 1
    with pytest.raises(PdfError, match="no page 3"):
        render_page(two_columns(), 3)


def test_pdf_text_is_a_document() -> None:
    doc = read_bytes(two_columns(), "cols.pdf")
    assert isinstance(doc.pdf, PdfText)
    assert doc.text == doc.pdf.text
    assert doc.pages == doc.pdf.pages
    stream = read_bytes(two_columns(), "cols.pdf", pdf_order="stream")
    assert stream.text != doc.text
    assert sorted(_visible(stream.text).elements()) == sorted(_visible(doc.text).elements())
