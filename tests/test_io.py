"""Tests for chunking.documents.io: reading documents from bytes and files."""

from __future__ import annotations

import codecs
import io
import os
import random
from pathlib import Path

import pytest

import chunking
import chunking.documents.io
from chunking import Config, run
from chunking.documents.io import (
    MAX_BYTES_DEFAULT,
    SUPPORTED_EXTENSIONS,
    Document,
    DocumentError,
    read_bytes,
    read_path,
)
from tests.invariants import check_invariants

SAMPLE_DOCS = Path(__file__).resolve().parent.parent / "sample_docs"


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _pdf_with_pages(*page_texts: str) -> bytes:
    """A minimal, valid PDF with one line of Helvetica text per page."""
    page_count = len(page_texts)
    font_id = 3 + 2 * page_count
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(page_count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {page_count} >>".encode(),
    ]
    for i, text in enumerate(page_texts):
        content = f"BT /F1 18 Tf 72 700 Td ({text}) Tj ET".encode("latin-1")
        objects.append(
            (
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 {font_id} 0 R >> >> "
                f"/Contents {4 + 2 * i} 0 R >>"
            ).encode()
        )
        objects.append(
            f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream"
        )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")

    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref_at = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref_at}\n%%EOF\n"
    ).encode()
    return bytes(out)


# ------------------------------------------------------------------ text encodings


def test_utf8_text_is_read_unchanged_including_crlf(tmp_path: Path) -> None:
    text = "Grüße aus Köln — ½ € 😀\r\nSecond line\r\n"
    doc = read_path(_write(tmp_path, "notes.txt", text.encode("utf-8")))
    assert doc == Document(
        text=text, name="notes.txt", kind="text", encoding="utf-8", encoding_confidence=1.0
    )


def test_utf8_bom_is_detected_and_stripped(tmp_path: Path) -> None:
    data = codecs.BOM_UTF8 + "# Título\n\nCuerpo.".encode()
    doc = read_path(_write(tmp_path, "readme.md", data))
    assert doc.text == "# Título\n\nCuerpo."
    assert doc.encoding == "utf-8-sig"
    assert doc.kind == "markdown"


@pytest.mark.parametrize(
    ("codec", "bom", "expected"),
    [
        ("utf-16-le", codecs.BOM_UTF16_LE, "utf-16-le"),
        ("utf-16-be", codecs.BOM_UTF16_BE, "utf-16-be"),
        ("utf-32-le", codecs.BOM_UTF32_LE, "utf-32-le"),
        ("utf-32-be", codecs.BOM_UTF32_BE, "utf-32-be"),
    ],
)
def test_utf16_and_utf32_with_bom(codec: str, bom: bytes, expected: str) -> None:
    text = "Ünïcödé line one\nline two with ß and 日本語\n"
    doc = read_bytes(bom + text.encode(codec), "wide.txt")
    assert doc.text == text
    assert doc.encoding == expected


def test_utf16_le_without_bom_is_recognised() -> None:
    text = "Plain ASCII-ish words in UTF-16 without a byte-order mark.\n" * 3
    doc = read_bytes(text.encode("utf-16-le"), "nobom.txt")
    assert doc.text == text
    assert doc.encoding == "utf-16-le"


def test_latin1_text_is_decoded_exactly(tmp_path: Path) -> None:
    text = "Café crème, naïve façade. " * 20
    doc = read_path(_write(tmp_path, "latin.txt", text.encode("latin-1")))
    assert doc.text == text
    assert doc.encoding is not None and doc.encoding != "utf-8"


def test_short_latin1_text_is_decoded_exactly() -> None:
    assert read_bytes("Café crème".encode("latin-1"), "a.txt").text == "Café crème"


def test_cp1252_curly_quotes_and_dashes() -> None:
    text = "He said \u201chello\u201d \u2014 it\u2019s a caf\u00e9 \u2026 " * 10
    doc = read_bytes(text.encode("cp1252"), "quotes.txt")
    assert doc.text == text
    assert doc.encoding == "cp1252"


def test_non_western_single_byte_encoding_is_not_forced_to_cp1252() -> None:
    text = "Привет, как дела? Это проверка кодировки текста. " * 10
    doc = read_bytes(text.encode("cp1251"), "russian.txt")
    assert doc.text == text


# Short and repetitive texts in legacy code pages: charset-normalizer alone read the
# French one as Baltic cp1257 ("Élève" became "Élčve") without a word.
LEGACY_TEXTS = [
    ("French", "Élève à l'école, où l'été est très chaud. Ça coûte déjà cher!", "latin-1"),
    ("French", "Élève à l'école, où l'été est très chaud. Ça coûte déjà cher!", "cp1252"),
    ("German", "Größere Äpfel über die Straße tragen, schön müde Füße.", "latin-1"),
    ("German", "Größere Äpfel über die Straße tragen – schön müde Füße.", "cp1252"),
    ("Spanish", "El niño pequeño comió en España. ¿Qué año? ¡Señor, mañana!", "latin-1"),
    ("Spanish", "El niño pequeño comió en España. ¿Qué año? ¡Señor, mañana!", "cp1252"),
    ("Portuguese", "A situação não é fácil: coração, ação e informação à mão.", "latin-1"),
    ("Portuguese", "A situação não é fácil: “coração”, ação e informação à mão.", "cp1252"),
    ("Italian", "Perché la città è così bella? Più caffè, però già è tardi.", "latin-1"),
    ("Italian", "Perché la città è così bella? Più caffè… però già è tardi.", "cp1252"),
    ("Dutch", "Café in Curaçao: één financiële crème brûlée, ideeën geërfd.", "latin-1"),
    ("Dutch", "Café in Curaçao: één financiële crème brûlée, ideeën geërfd.", "cp1252"),
    ("Russian", "Быстрая коричневая лиса прыгает через ленивую собаку. Привет!", "cp1251"),
    ("Czech", "Příliš žluťoučký kůň úpěl ďábelské ódy. Řeka teče přes město.", "cp1250"),
]


@pytest.mark.parametrize("repeat", [1, 40], ids=["short", "repetitive"])
@pytest.mark.parametrize(
    ("language", "text", "codec"), LEGACY_TEXTS, ids=[f"{t[0]}-{t[2]}" for t in LEGACY_TEXTS]
)
def test_legacy_code_pages_decode_to_the_original(
    language: str, text: str, codec: str, repeat: int
) -> None:
    original = "\n".join([text] * repeat)
    doc = read_bytes(original.encode(codec), "legacy.txt")
    assert doc.text == original
    assert doc.encoding_confidence is not None and doc.encoding_confidence >= 0.9
    assert doc.encoding_warning is None


def test_an_undecidable_code_page_prefers_cp1252_and_says_so() -> None:
    # "Smørrebrød" in cp1252 is "Smřrrebrřd" in cp1250: both are letters of a real
    # alphabet (Danish, Czech), so the choice is a guess, and the document says so.
    doc = read_bytes("Smørrebrød og rødgrød".encode("cp1252"), "danish.txt")
    assert doc.text == "Smørrebrød og rødgrød"
    assert doc.encoding == "cp1252"
    assert doc.encoding_confidence is not None and doc.encoding_confidence <= 0.5
    assert doc.encoding_warning is not None and "cp1250" in doc.encoding_warning


def test_the_user_can_name_the_encoding() -> None:
    data = "Smřrrebrřd".encode("cp1250")
    assert read_bytes(data, "a.txt").encoding == "cp1252"  # the guess
    doc = read_bytes(data, "a.txt", encoding="cp1250")
    assert (doc.text, doc.encoding, doc.encoding_confidence) == ("Smřrrebrřd", "cp1250", 1.0)
    assert doc.encoding_warning is None


def test_a_named_encoding_that_does_not_fit_is_a_clear_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.txt", "Привет".encode("cp1251"))
    with pytest.raises(DocumentError, match=r"r\.txt is not valid utf-8 \(byte 0"):
        read_path(path, encoding="utf-8")
    with pytest.raises(DocumentError, match="unknown encoding 'klingon'"):
        read_path(path, encoding="klingon")


def test_utf8_is_certain() -> None:
    doc = read_bytes("Grüße".encode(), "a.txt")
    assert (doc.encoding, doc.encoding_confidence, doc.encoding_warning) == ("utf-8", 1.0, None)


# ------------------------------------------------------------------ bad text input


def test_random_binary_with_nul_bytes_is_rejected() -> None:
    data = bytes(random.Random(7).randrange(256) for _ in range(4000)) + b"\x00"
    with pytest.raises(DocumentError, match=r"blob\.txt looks like a binary file"):
        read_bytes(data, "blob.txt")


def test_png_renamed_to_txt_is_rejected(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
    with pytest.raises(DocumentError, match=r"image\.txt looks like a binary file"):
        read_path(_write(tmp_path, "image.txt", png))


def test_binary_without_nul_bytes_is_rejected() -> None:
    rng = random.Random(3)
    data = bytes(rng.randrange(1, 256) for _ in range(4000))
    with pytest.raises(DocumentError, match="binary"):
        read_bytes(data, "noise.log")


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"empty\.txt is empty"):
        read_path(_write(tmp_path, "empty.txt", b""))


def test_whitespace_only_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "blank.md", b"  \n\t\r\n   \n")
    with pytest.raises(DocumentError, match=r"blank\.md contains only whitespace"):
        read_path(path)


def test_oversized_bytes_name_size_and_limit() -> None:
    with pytest.raises(DocumentError) as info:
        read_bytes(b"x" * 3000, "big.txt", max_bytes=1024)
    message = str(info.value)
    assert "big.txt" in message
    assert "2.9 KB" in message
    assert "1 KB limit" in message


def test_oversized_message_in_megabytes() -> None:
    data = b"a" * (3 * 1024 * 1024 + 300_000)
    with pytest.raises(DocumentError, match=r"report\.txt is 3\.3 MB, over the 2 MB"):
        read_bytes(data, "report.txt", max_bytes=2 * 1024 * 1024)


def test_read_path_checks_size_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, "huge.txt", b"y" * 5000)

    def refuse_open(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file must not be opened")

    monkeypatch.setattr(chunking.documents.io, "open", refuse_open, raising=False)
    with pytest.raises(DocumentError, match=r"huge\.txt is 4\.9 KB, over the 4 KB"):
        read_path(path, max_bytes=4096)


def test_exactly_at_the_limit_is_accepted() -> None:
    assert read_bytes(b"abcd", "four.txt", max_bytes=4).text == "abcd"


def test_default_limit_is_50_mb() -> None:
    assert MAX_BYTES_DEFAULT == 50 * 1024 * 1024


def test_unsupported_extension_lists_supported_ones(tmp_path: Path) -> None:
    with pytest.raises(DocumentError) as info:
        read_path(_write(tmp_path, "photo.png", b"not really"))
    message = str(info.value)
    assert "photo.png" in message
    assert ".png" in message
    for extension in (".txt", ".md", ".pdf", ".docx", ".py"):
        assert extension in message


def test_missing_file_is_a_document_error(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"ghost\.txt was not found"):
        read_path(tmp_path / "ghost.txt")


def test_folder_is_a_document_error(tmp_path: Path) -> None:
    folder = tmp_path / "docs.txt"
    folder.mkdir()
    with pytest.raises(DocumentError, match="folder"):
        read_path(folder)


def test_file_without_extension_is_read_as_text(tmp_path: Path) -> None:
    doc = read_path(_write(tmp_path, "LICENSE", b"Permission is hereby granted.\n"))
    assert (doc.kind, doc.text) == ("text", "Permission is hereby granted.\n")


def test_file_without_extension_that_is_binary_is_rejected() -> None:
    with pytest.raises(DocumentError, match="binary"):
        read_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50, "program")


def test_extension_is_case_insensitive() -> None:
    assert read_bytes(b"<p>Hi</p>", "PAGE.HTM").kind == "html"


def test_supported_extensions_table() -> None:
    assert SUPPORTED_EXTENSIONS[".markdown"] == "markdown"
    assert SUPPORTED_EXTENSIONS[".tsx"] == "code"
    assert SUPPORTED_EXTENSIONS[".log"] == "text"
    assert SUPPORTED_EXTENSIONS[".docx"] == "docx"


# ------------------------------------------------------------------- text kinds


def test_valid_json_keeps_raw_text() -> None:
    raw = '{\r\n  "a": [1, 2],\r\n  "b": "ü"\r\n}'
    doc = read_bytes(raw.encode(), "data.json")
    assert (doc.kind, doc.text) == ("json", raw)


def test_invalid_json_is_returned_as_text() -> None:
    raw = "{'not': json, __import__('os')}"
    doc = read_bytes(raw.encode(), "data.json")
    assert (doc.kind, doc.text) == ("text", raw)


def test_html_keeps_raw_source() -> None:
    raw = "<html><head><style>p{}</style></head><body><h1>T</h1></body></html>"
    doc = read_bytes(raw.encode(), "page.html")
    assert (doc.kind, doc.text, doc.language) == ("html", raw, None)


@pytest.mark.parametrize(
    ("name", "language"),
    [
        ("app.py", "python"),
        ("app.jsx", "javascript"),
        ("app.tsx", "typescript"),
        ("Main.java", "java"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("util.h", "c"),
        ("util.hpp", "cpp"),
    ],
)
def test_code_language_from_extension(name: str, language: str) -> None:
    doc = read_bytes(b"x = 1\n", name)
    assert (doc.kind, doc.language) == ("code", language)


def test_page_of_is_none_for_text() -> None:
    assert read_bytes(b"hello", "a.txt").page_of(0) is None


# --------------------------------------------------------------------------- PDF


def test_two_page_pdf_text_and_page_spans(tmp_path: Path) -> None:
    data = _pdf_with_pages("Alpha page one", "Beta page two")
    doc = read_path(_write(tmp_path, "two.pdf", data))
    assert doc.kind == "pdf"
    assert doc.encoding is None
    assert len(doc.pages) == 2
    (s1, e1), (s2, e2) = doc.pages
    assert doc.text[s1:e1].strip() == "Alpha page one"
    assert doc.text[s2:e2].strip() == "Beta page two"
    assert doc.text[e1:s2] == "\n\n"
    assert e2 == len(doc.text)
    assert doc.page_of(doc.text.index("Alpha")) == 1
    assert doc.page_of(doc.text.index("Beta")) == 2
    assert doc.page_of(len(doc.text)) == 2
    assert doc.page_of(len(doc.text) + 1) is None
    assert doc.page_of(-1) is None


def test_chunks_of_a_pdf_carry_their_pages(tmp_path: Path) -> None:
    doc = read_path(_write(tmp_path, "two.pdf", _pdf_with_pages("Alpha page one", "Beta page two")))
    whole, *_ = doc.with_pages(chunking.chunk(doc.text, "recursive", size=1000))
    assert whole.metadata["pages"] == [1, 2]
    per_page = doc.with_pages(chunking.chunk(doc.text, "paragraph", size=20))
    assert [c.metadata["pages"] for c in per_page] == [[1], [2]]
    text_doc = read_bytes(b"plain text", "a.txt")
    assert "pages" not in text_doc.with_pages(chunking.chunk(text_doc.text))[0].metadata


def test_pdf_without_text_layer_suggests_ocr() -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=612, height=792)
    buffer = io.BytesIO()
    writer.write(buffer)
    with pytest.raises(DocumentError, match=r"scan\.pdf has no text layer.*OCR"):
        read_bytes(buffer.getvalue(), "scan.pdf")


def test_corrupt_pdf(tmp_path: Path) -> None:
    path = _write(tmp_path, "broken.pdf", b"%PDF-1.4\nthis is not a real pdf\n")
    with pytest.raises(DocumentError, match=r"broken\.pdf could not be read as a PDF"):
        read_path(path)


def test_truncated_pdf() -> None:
    data = _pdf_with_pages("Alpha", "Beta")[:60]
    with pytest.raises(DocumentError, match=r"cut\.pdf"):
        read_bytes(data, "cut.pdf")


def test_encrypted_pdf_with_unknown_password() -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(_pdf_with_pages("Secret"))))
    writer.encrypt(user_password="hunter2", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    with pytest.raises(DocumentError, match=r"locked\.pdf is password-protected"):
        read_bytes(buffer.getvalue(), "locked.pdf")


# -------------------------------------------------------------------------- DOCX


def _docx_bytes() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Quarterly Report", level=1)
    document.add_paragraph("Revenue grew in every region.")
    document.add_paragraph("")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Region"
    table.cell(0, 1).text = "Growth"
    table.cell(1, 0).text = "North"
    table.cell(1, 1).text = "12%"
    document.add_paragraph("Closing remarks after the table.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_docx_paragraphs_and_tables_in_document_order(tmp_path: Path) -> None:
    doc = read_path(_write(tmp_path, "report.docx", _docx_bytes()))
    assert doc.kind == "docx"
    assert doc.encoding is None
    assert doc.text == (
        "# Quarterly Report\n\n"
        "Revenue grew in every region.\n\n"
        "| Region | Growth |\n| --- | --- |\n| North | 12% |\n\n"
        "Closing remarks after the table."
    )


def _docx_with_headings() -> bytes:
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    document.add_heading("Annual Report", level=0)  # the "Title" style
    document.add_heading("Results", level=1)
    document.add_paragraph("Revenue grew in every region.")
    document.add_heading("North\nand east", level=2)  # a line break inside a heading
    document.add_paragraph("Up 12% on last year.")
    custom = document.styles.add_style("Region Heading", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = document.styles["Heading 3"]
    document.add_paragraph("South", style=custom)
    document.add_paragraph("Flat.")
    document.add_heading("Footnote level", level=9)
    document.add_heading("   ", level=2)  # an empty heading is dropped like any block
    document.add_paragraph("Plain text, not a heading.", style="Body Text")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_docx_headings_become_markdown_headings() -> None:
    doc = read_bytes(_docx_with_headings(), "annual.docx")
    assert doc.text == (
        "# Annual Report\n\n"
        "# Results\n\n"
        "Revenue grew in every region.\n\n"
        "## North and east\n\n"
        "Up 12% on last year.\n\n"
        "### South\n\n"
        "Flat.\n\n"
        "###### Footnote level\n\n"
        "Plain text, not a heading."
    )


def test_markdown_strategies_see_docx_headings_with_exact_offsets() -> None:
    doc = read_bytes(_docx_with_headings(), "annual.docx")
    config = Config.create("markdown", size=50, unit="tokens", levels=3)
    chunks = run(doc.text, config)
    check_invariants(doc.text, chunks, config)
    paths = {c.text.splitlines()[0]: c.metadata["header_path"] for c in chunks}
    assert paths["## North and east"] == ["Results", "North and east"]
    assert paths["### South"] == ["Results", "North and east", "South"]


def test_docx_without_text() -> None:
    import docx

    buffer = io.BytesIO()
    docx.Document().save(buffer)
    with pytest.raises(DocumentError, match=r"void\.docx contains no text"):
        read_bytes(buffer.getvalue(), "void.docx")


def test_corrupt_docx(tmp_path: Path) -> None:
    path = _write(tmp_path, "broken.docx", b"PK\x03\x04 definitely not a zip file")
    with pytest.raises(DocumentError, match=r"broken\.docx could not be read"):
        read_path(path)


def test_zip_that_is_not_a_docx() -> None:
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(DocumentError, match=r"fake\.docx"):
        read_bytes(buffer.getvalue(), "fake.docx")


# -------------------------------------------------------------------- sample_docs


def _sample_files() -> list[Path]:
    return sorted(
        path for path in SAMPLE_DOCS.iterdir() if path.is_file() and path.name != "README.md"
    )


def test_sample_docs_cover_the_main_kinds() -> None:
    files = _sample_files()
    assert len(files) >= 7
    kinds = {read_path(path).kind for path in files}
    assert {"markdown", "html", "code", "text"} <= kinds


@pytest.mark.parametrize("path", _sample_files(), ids=lambda path: path.name)
def test_every_sample_doc_reads(path: Path) -> None:
    doc = read_path(path)
    assert doc.name == path.name
    assert doc.text.strip()
    assert doc.encoding == "utf-8"
    assert "\r" not in doc.text
    assert len(doc.text.encode("utf-8")) == os.path.getsize(path)


def test_sample_readme_mentions_every_sample() -> None:
    readme = (SAMPLE_DOCS / "README.md").read_text(encoding="utf-8")
    for path in _sample_files():
        assert path.name in readme
