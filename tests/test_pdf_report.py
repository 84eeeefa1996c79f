"""A PDF in the HTML report (``chunk-explorer report``): its first pages as inlined PNG
images with every configuration's chunk rectangles, still one file with no network
request."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from chunking import Config, run
from chunking.cli import main
from chunking.documents.io import read_bytes
from chunking.output.html_report import REPORT_PDF_PAGES, document_report
from tests.test_pdf import with_furniture
from tests.test_report_html import parse

PNG = "data:image/png;base64,"


def _outside_scripts(page: str) -> str:
    return re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)


def _drawn(page: str, number: int) -> list[str]:
    """The page views drawn for PDF page ``number``, one per configuration."""
    return re.findall(
        rf'<div class="ce-pdf-page" data-page="{number}".*?</div></div>', page, flags=re.S
    )


def _boxes_on(chunks: list, number: int) -> int:
    return sum(1 for c in chunks for b in c.metadata["boxes"] if b[0] == number)


def test_the_report_of_a_pdf_inlines_its_pages_with_every_configurations_rectangles() -> None:
    data = with_furniture(3)
    document = read_bytes(data, "report.pdf")
    first = Config.create("recursive", size=60)
    other = Config.create("fixed", size=90, overlap=20)
    page = document_report(document, first, compare=[other], pdf=data)
    links = parse(page).links
    assert links and all(link.startswith(PNG) for link in links)  # images only, inlined
    assert len(links) == 3 * 2  # three pages, one view per configuration
    png = base64.b64decode(links[0][len(PNG) :])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    outside = _outside_scripts(page)
    assert "http://" not in outside and "https://" not in outside
    assert "All 3 pages" in page
    for number in (1, 2, 3):
        views = _drawn(page, number)
        assert len(views) == 2
        for view, config in zip(views, (first, other), strict=True):
            chunks = document.with_pages(run(document.text, config))
            assert view.count('class="ce-pdf-chunk') == _boxes_on(chunks, number)
            assert view.count('class="ce-pdf-furniture"') == 2  # header and page number
    assert "ce-pdf-overlap" in page  # the overlapping configuration's hatching
    assert "A · Recursive" in page and "B · Fixed" in page


def test_only_the_first_pages_are_drawn_and_the_rest_announced() -> None:
    data = with_furniture(REPORT_PDF_PAGES + 2)
    document = read_bytes(data, "long.pdf")
    page = document_report(document, Config.create("recursive", size=60), pdf=data)
    assert len(parse(page).links) == REPORT_PDF_PAGES
    assert f"The first {REPORT_PDF_PAGES} of {REPORT_PDF_PAGES + 2} pages" in page
    assert _drawn(page, REPORT_PDF_PAGES) and not _drawn(page, REPORT_PDF_PAGES + 1)


def test_a_text_document_or_a_pdf_without_its_bytes_has_no_pages() -> None:
    data = with_furniture(2)
    document = read_bytes(data, "report.pdf")
    page = document_report(document, Config.create("recursive", size=60))
    assert "ce-pdf-page" not in page and parse(page).links == []


def test_the_report_command_draws_a_pdfs_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "report.pdf"
    source.write_bytes(with_furniture(2))
    out = tmp_path / "report.html"
    argv = ["report", str(source), "--strategy", "recursive", "--size", "60", "-o", str(out)]
    assert main(argv) == 0
    page = out.read_text(encoding="utf-8")
    assert len(parse(page).links) == 2 and all(x.startswith(PNG) for x in parse(page).links)
    assert _drawn(page, 1) and _drawn(page, 2)
    assert "wrote" in capsys.readouterr().err
