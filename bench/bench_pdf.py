"""PDF text with boxes and page images: how long, how much memory.

    .venv/bin/python -m bench.bench_pdf                  # from the repository root
    .venv/bin/python -m bench.bench_pdf --pages 1000     # the 1,000-page case

A generated PDF (fpdf2, the ``dev`` extra) of ``--pages`` pages, each with a running
header, two columns of 48 lines whose content stream interleaves the columns, and a
page number. Measured: :func:`chunking.documents.pdf.read_pdf` (text with a box for
every character, layout order, furniture; best of ``--repeat``), the boxes of every
chunk of a recursive cut, and :func:`~chunking.documents.pdf.render_page` of one page
at scale 1.5 (best of ``--repeat``). Peak memory: Python's allocations while reading
(tracemalloc, a separate run) and the process's peak resident size. Targets on the
project's machine for 100 pages: under 5 s for the text with boxes, under 0.5 s for a
page image. A benchmark, not a test: it asserts nothing, it prints figures.
"""

from __future__ import annotations

import argparse
import random
import resource
import time
import tracemalloc

import chunking
from chunking.documents.pdf import read_pdf, render_page

WORDS = [
    "chunk",
    "retrieval",
    "boundary",
    "overlap",
    "token",
    "sentence",
    "paragraph",
    "layout",
    "column",
    "gutter",
    "page",
    "header",
    "footer",
    "figure",
    "table",
    "index",
    "vector",
    "query",
    "answer",
    "model",
    "window",
    "offset",
]


def make_pdf(pages: int, seed: int = 0) -> bytes:
    from fpdf import FPDF

    rng = random.Random(seed)
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_font("Helvetica", size=9)
    pdf.set_auto_page_break(False)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.text(220, 36, "Benchmark Report - Chunk Explorer")
        for line in range(48):
            y = 70 + 15 * line
            for x in (40, 310):  # left then right: the stream interleaves the columns
                pdf.text(x, y, " ".join(rng.choice(WORDS) for _ in range(7)))
        pdf.text(290, 815, f"Page {number} of {pages}")
    return bytes(pdf.output())


def best(repeat: int, work: object) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        result = work()  # type: ignore[operator]
        times.append(time.perf_counter() - began)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    data = make_pdf(args.pages)
    print(f"PDF: {args.pages} pages, {len(data) / 2**20:.1f} MB")
    seconds, read = best(args.repeat, lambda: read_pdf(data))
    text = read.text  # type: ignore[attr-defined]
    print(
        f"text with boxes: {seconds:.2f} s ({seconds / args.pages * 1000:.1f} ms/page), "
        f"{len(text):,} characters, {len(read.lines):,} line fragments, "  # type: ignore[attr-defined]
        f"{len(read.furniture)} furniture lines left out"  # type: ignore[attr-defined]
    )
    chunks = chunking.chunk(text, "recursive", size=800, unit="chars")
    began = time.perf_counter()
    boxes = [read.boxes_of(c.start, c.end) for c in chunks]  # type: ignore[attr-defined]
    print(
        f"boxes of {len(chunks):,} chunks: {time.perf_counter() - began:.2f} s "
        f"({sum(map(len, boxes)):,} boxes)"
    )
    middle = max(1, args.pages // 2)
    seconds, png = best(args.repeat, lambda: render_page(data, middle, scale=1.5))
    print(f"page image (page {middle}, scale 1.5): {seconds:.3f} s, {len(png) / 1024:.0f} KB")  # type: ignore[arg-type]

    tracemalloc.start()
    read_pdf(data)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"peak memory: {peak / 2**20:.0f} MB Python allocations while reading; "
        f"{rss:.0f} MB peak resident (whole process)"
    )


if __name__ == "__main__":
    main()
