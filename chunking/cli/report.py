"""``chunk-explorer report``: what a configuration does to a document, as one HTML file.

::

    chunk-explorer report notes.md --config recursive.config.json --output report.html
    chunk-explorer report notes.md --strategy recursive --size 400 --unit tokens -o r.html
    chunk-explorer report notes.md --config a.json --compare b.json c.json -o r.html

The file is self-contained (:mod:`chunking.output.html_report`): it opens offline, in
any browser, and can be attached to an issue or a review.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .options import load_config, output, prepare


def add_report_parser(commands: Any, options: argparse.ArgumentParser) -> None:
    """Add ``report`` to an ``add_subparsers()`` object; ``options`` is the parent
    parser of the document and strategy flags."""
    report = commands.add_parser(
        "report",
        parents=[options],
        help="write a standalone HTML report of a configuration on a document",
        description="Write one self-contained HTML file (no network request) with the "
        "document's chunk boundaries, the size histogram, statistics and warnings, the "
        "configuration and its code export; --compare adds other configurations side "
        "by side.",
    )
    report.add_argument(
        "--output", "-o", required=True, metavar="REPORT.html", help="the file to write"
    )
    report.add_argument(
        "--compare",
        nargs="+",
        default=[],
        metavar="CONFIG.json",
        help="configurations to draw next to the first (boundary strip, histograms, statistics)",
    )
    report.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    """The ``report`` handler: settle the configuration, cut, write the file."""
    from ..output.html_report import document_report

    compare = [load_config(path) for path in args.compare]  # typos fail before the work
    config, document = prepare(args)
    # a PDF's first pages are drawn from its bytes (read again: the size was checked)
    data = Path(args.file).read_bytes() if document.pdf is not None else None
    page = document_report(document, config, compare=compare, pdf=data, password=args.password)
    with output(args.output) as out:
        out.write(page)
    size = Path(args.output).stat().st_size
    print(f"wrote {args.output} ({size / 2**20:.1f} MB)", file=sys.stderr)
    return 0
