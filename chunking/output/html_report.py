"""Standalone HTML reports: what a configuration does to a document, and evaluation
results, as one self-contained file to attach to an issue or a review.

One file, no network request: plotly's JavaScript is inlined once in the ``<head>``
(:func:`plotly.offline.get_plotlyjs`), the styles too, and each figure is drawn from
its JSON by ``Plotly.newPlot`` (plotly's own ``to_html``, which escapes ``<``, ``>`` and
``/`` in the JSON so no string can close the script). Document text only ever reaches
the page through :func:`chunking.viz.render.render_window`, which escapes it; every
other string (names, labels, warnings, configurations, code) goes through
:func:`html.escape`, and tables through pandas' escaping ``to_html``.

- :func:`document_report`: the boundary view (the colours and hover details of the
  Explore page), the size histogram, the statistics in every unit with the warnings,
  the configuration and its code export; with ``compare`` configurations, the boundary
  strip and histograms side by side and a statistics row per configuration. For a PDF
  (given its bytes), its first pages (:data:`REPORT_PDF_PAGES`) as images inlined as
  ``data:`` URLs, with every configuration's chunk rectangles
  (:func:`pdf_pages_html`).
- :func:`evaluation_report`: an evaluation's results table, Pass@k per row and the
  metrics against chunk size (or each technique's difference from dense retrieval).

Needs plotly (the ``app`` extra), like :mod:`chunking.viz`.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from ..analysis.report import Report, make_report
from ..config import Config
from ..core import run
from ..documents.io import Document
from ..documents.pdf import PdfError, render_page
from ..engine.spans import document_sentences
from ..evaluation.passk import k_display, table_ks
from ..evaluation.sweep import COLUMN_LABELS
from ..model import Chunk
from ..viz.figures import boundary_strip, histogram_panels, size_histogram
from ..viz.pdf_pages import document_page_html
from ..viz.render import BOUNDARY_CSS, HIERARCHY_LEGEND_HTML, LEGEND_HTML, is_nested, render_window
from .snippets import TARGETS, SnippetError, snippet

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

#: Most characters of the document drawn in the boundary view (the rest is announced).
REPORT_CHARS: Final = 1_000_000
#: Pages of a PDF drawn in the report, from the first (the others are announced).
REPORT_PDF_PAGES: Final = 5
#: Pixels per PDF point of the report's page images.
REPORT_PDF_SCALE: Final = 1.0
#: What the generator says it is (in the page's ``<meta name="generator">``).
GENERATOR: Final = "chunk-explorer"
_PLOT_CONFIG: Final = {"displaylogo": False, "responsive": True}

REPORT_CSS: Final = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
  color: #1f2328; background: #fff; }
main { max-width: 1200px; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; margin: 0 0 0.25rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.6rem; border-bottom: 1px solid #d0d7de;
  padding-bottom: 0.3rem; }
.ce-caption { color: #57606a; margin: 0 0 1rem; }
.ce-metrics { display: flex; flex-wrap: wrap; gap: 0.75rem; margin: 0.75rem 0; }
.ce-metric { border: 1px solid #d0d7de; border-radius: 0.5rem; padding: 0.5rem 0.9rem;
  min-width: 7rem; }
.ce-metric b { display: block; font-size: 1.35rem; }
.ce-metric span { color: #57606a; font-size: 0.8rem; }
.ce-warning { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 0.4rem;
  padding: 0.5rem 0.8rem; margin: 0.4rem 0; }
table.ce-table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0; }
table.ce-table th, table.ce-table td { border: 1px solid #d0d7de; padding: 0.25rem 0.55rem;
  text-align: right; }
table.ce-table th { background: #f6f8fa; }
pre.ce-code { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 0.4rem;
  padding: 0.7rem; overflow-x: auto; font-size: 0.82rem; }
.ce-fidelity { font-size: 0.8rem; color: #57606a; }
footer { color: #57606a; font-size: 0.8rem; margin-top: 2.5rem; }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


@lru_cache(maxsize=1)
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


#: Room around a report's plots: the app's figures keep tight margins (Streamlit lays
#: them out), but a standalone page draws them as they are, so 10 pixels clip the y
#: tick labels ("50" read "i0") and the x title sits on the tick labels.
REPORT_MARGIN: Final = {"l": 64, "r": 24, "t": 60, "b": 56}
#: Pixels between an x axis title and its tick labels.
TITLE_STANDOFF: Final = 12


def report_layout(figure: go.Figure) -> go.Figure:
    """``figure`` with room for its tick labels and axis titles on a standalone page."""
    figure.update_layout(margin=REPORT_MARGIN)
    figure.update_xaxes(automargin=True, title_standoff=TITLE_STANDOFF)
    figure.update_yaxes(automargin=True)
    return figure


def figure_html(figure: go.Figure, div_id: str) -> str:
    """A figure as a ``<div>`` and the script that draws it (with :func:`report_layout`);
    the plotly library itself is in the page's head (:func:`page`)."""
    return report_layout(figure).to_html(
        full_html=False, include_plotlyjs=False, config=_PLOT_CONFIG, div_id=div_id
    )


def page(title: str, body: str, *, caption: str = "") -> str:
    """A complete HTML file: the title, ``body`` (already HTML), the styles and plotly."""
    head = (
        '<meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="{GENERATOR}">'
        f"<title>{_e(title)}</title>"
        f"<style>{REPORT_CSS}{BOUNDARY_CSS}</style>"
        f'<script type="text/javascript">{_plotly_js()}</script>'
    )
    intro = f"<h1>{_e(title)}</h1>" + (
        f'<p class="ce-caption">{_e(caption)}</p>' if caption else ""
    )
    footer = (
        f"<footer>Written by {GENERATOR}: one file, every script and style inlined, "
        "nothing loaded from the network.</footer>"
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head>{head}</head>'
        f"<body><main>{intro}{body}{footer}</main></body></html>"
    )


def _metrics(items: Sequence[tuple[str, str]]) -> str:
    cells = "".join(
        f'<div class="ce-metric"><b>{_e(v)}</b><span>{_e(k)}</span></div>' for k, v in items
    )
    return f'<div class="ce-metrics">{cells}</div>'


def _table(frame: pd.DataFrame, *, index: bool = False) -> str:
    return frame.to_html(index=index, escape=True, classes="ce-table", border=0, na_rep="—")


# ----------------------------------------------------------------- document report


def _summary_table(report: Report) -> pd.DataFrame:
    import pandas as pd

    rows = [s.to_dict() for s in report.summary.values()]
    frame = pd.DataFrame(rows)[["unit", "count", "mean", "std", "min", "max"]]
    frame.columns = ["Unit", "Chunks", "Mean", "Std. dev.", "Smallest", "Largest"]
    return frame.round(1)


def _warnings_html(report: Report) -> str:
    if not report.warnings:
        return '<p class="ce-caption">No warnings.</p>'
    return "".join(
        f'<div class="ce-warning"><b>{_e(w.title)}.</b> {_e(w.message)}</div>'
        for w in report.warnings
    )


def _code_html(config: Config) -> str:
    parts = [f'<pre class="ce-code">{_e(config.to_json())}</pre>']
    for target in TARGETS:
        try:
            made = snippet(config, target)
        except SnippetError as exc:
            parts.append(f"<h3>{_e(target)}</h3><p class='ce-fidelity'>{_e(exc)}</p>")
            continue
        note = f" — {made.note}" if made.note else ""
        parts.append(
            f"<h3>{_e(target)}</h3><p class='ce-fidelity'>{_e(made.fidelity)}{_e(note)}</p>"
        )
        if made.code:
            parts.append(f'<pre class="ce-code">{_e(made.code)}</pre>')
    return "".join(parts)


def document_report(
    document: Document,
    config: Config,
    chunks: Sequence[Chunk] | None = None,
    *,
    compare: Sequence[Config] = (),
    report: Report | None = None,
    max_chars: int = REPORT_CHARS,
    pdf: bytes | None = None,
    password: str | None = None,
    max_pages: int = REPORT_PDF_PAGES,
) -> str:
    """The HTML report of ``config`` on ``document`` (``chunks`` when already cut, and
    their ``report`` from :func:`~chunking.analysis.report.make_report` when already made,
    as the app has them).

    With ``compare``, the other configurations are cut too and drawn next to it:
    boundary strip, histograms and one statistics row each. With ``pdf`` (the bytes
    ``document`` was read from, and its ``password``), its first ``max_pages`` pages
    are drawn with every configuration's chunks. ``ValueError`` from any
    configuration that cannot cut the document.
    """
    chunks = list(chunks) if chunks is not None else run(document.text, config)
    if report is None:
        report = make_report(document, config, chunks)  # the document's shared sentences
    unit = config.unit
    summary = report.summary[unit]
    sections = [
        "<h2>Statistics</h2>",
        _metrics(
            [
                ("chunks", f"{summary.count:,}"),
                (f"mean ({unit})", f"{summary.mean:,.1f}"),
                (f"std ({unit})", f"{summary.std:,.1f}"),
                (f"min ({unit})", f"{summary.min:,}"),
                (f"max ({unit})", f"{summary.max:,}"),
                ("warnings", f"{report.warning_count:,}"),
            ]
        ),
        _warnings_html(report),
        figure_html(
            size_histogram(report.sizes[unit], limit=config.limit, unit=unit), "ce-histogram"
        ),
        "<p><b>Sizes in every unit</b></p>",
        _table(_summary_table(report)),
    ]
    if compare:
        sections.append(_comparison_html(document, [config, *compare], report))
    legend = HIERARCHY_LEGEND_HTML if is_nested(chunks) else LEGEND_HTML
    sections += [
        "<h2>Document with chunk boundaries</h2>",
        '<p class="ce-caption">Hover over the text for each chunk\'s index, offsets and size.</p>',
        legend,
        render_window(document.text, chunks, 0, len(document.text), unit=unit, max_chars=max_chars),
    ]
    if pdf is not None and document.pdf is not None:
        cut = [(config, chunks)] + [(c, run(document.text, c)) for c in compare]
        sections.append(pdf_pages_html(document, cut, pdf, password=password, pages=max_pages))
    sections += [
        "<h2>Configuration and code</h2>",
        _code_html(config),
    ]
    caption = f"{document.describe()} — {config.label(title=True)}"
    return page(f"Chunking report: {document.name}", "".join(sections), caption=caption)


def pdf_pages_html(
    document: Document,
    cut: Sequence[tuple[Config, Sequence[Chunk]]],
    data: bytes,
    *,
    password: str | None = None,
    pages: int = REPORT_PDF_PAGES,
    scale: float = REPORT_PDF_SCALE,
) -> str:
    """The first ``pages`` pages of the PDF ``document`` (read from ``data``), each as
    its PNG inlined as a ``data:`` URL with the chunk rectangles of every configuration
    in ``cut`` side by side (the app's page view); "" when it is not a PDF."""
    if document.pdf is None or not document.pdf.layouts:
        return ""
    count = len(document.pdf.layouts)
    shown = max(0, min(pages, count))
    note = f"All {count} pages" if shown == count else f"The first {shown} of {count} pages"
    parts = [
        "<h2>Pages</h2>",
        f'<p class="ce-caption">{note}, each with every configuration\'s chunks drawn from '
        "their exact character ranges. Hover over a rectangle for its chunk's index, offsets "
        "and size; hatching marks overlap, struck-through lines are headers and footers.</p>",
    ]
    columns = f"repeat({len(cut)}, minmax(0, 1fr))"
    for number in range(1, shown + 1):
        try:
            image: bytes | None = render_page(data, number, scale=scale, password=password)
        except PdfError as exc:
            image = None
            parts.append(f'<p class="ce-caption">Page {number} cannot be drawn ({_e(exc)}).</p>')
        parts.append(
            f'<h3>Page {number}</h3><div class="ce-pdf-pages" '
            f'style="display:grid;grid-template-columns:{columns};gap:1rem">'
        )
        for i, (config, chunks) in enumerate(cut):
            drawn, _ = document_page_html(
                document, chunks, number, image=image, scale=scale, unit=config.unit
            )
            label = f"{chr(ord('A') + i)} · " if len(cut) > 1 and i < 26 else ""
            parts.append(f"<div><p><b>{_e(label + config.label(title=True))}</b></p>{drawn}</div>")
        parts.append("</div>")
    return "".join(parts)


def _comparison_html(
    document: Document,
    configs: Sequence[Config],
    first: Report,
) -> str:
    """Boundary strip, histograms and a statistics row per configuration; ``first`` is
    the report of ``configs[0]``, already made."""
    import pandas as pd

    sentences = document_sentences(document.text)
    names, reports = [], [first]
    for number, config in enumerate(configs):
        letter = chr(ord("A") + number) if number < 26 else str(number + 1)
        names.append(f"{letter} · {config.label(title=True)}")
        if number:
            cut = run(document.text, config)
            reports.append(make_report(document, config, cut, sentences=sentences))
    lanes = {name: r.boundaries for name, r in zip(names, reports, strict=True)}
    panels = histogram_panels(
        {n: r.sizes[r.unit] for n, r in zip(names, reports, strict=True)},
        units={n: r.unit for n, r in zip(names, reports, strict=True)},
        limits={n: r.limit for n, r in zip(names, reports, strict=True)},
    )
    rows = []
    for name, r in zip(names, reports, strict=True):
        s = r.summary[r.unit]
        tokens = r.summary.get("tokens")
        rows.append(
            {
                "Configuration": name,
                "Chunks": s.count,
                "Unit": r.unit,
                "Mean": round(s.mean, 1),
                "Smallest": s.min,
                "Largest": s.max,
                "Mean tokens": round(tokens.mean, 1) if tokens is not None else None,
                "Warnings": r.warning_count,
            }
        )
    return "".join(
        [
            "<h2>Compared configurations</h2>",
            figure_html(boundary_strip(lanes, len(document.text)), "ce-strip"),
            figure_html(panels, "ce-histograms"),
            _table(pd.DataFrame(rows)),
        ]
    )


# --------------------------------------------------------------- evaluation report


def _percent(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{100 * float(value):.{digits}f}"


def evaluation_display(table: pd.DataFrame) -> pd.DataFrame:
    """The results (or techniques) table as people read it: the columns that name a
    row, then Pass@k for every k, then the other metrics at every k, in percent."""
    import pandas as pd

    names = ("strategy", "size", "overlap", "unit", "threshold", "model", "technique")
    keys = [c for c in (*names, "configuration", "n_chunks", "mean_tokens") if c in table]
    shown = table[[c for c in keys if table[c].notna().any()]].copy()
    for label, values in k_display(table).items():
        shown[label] = values
    omega = "precision_omega_mean" if "precision_omega_mean" in table else "precision_omega"
    if omega in table:
        shown["Precision Ω"] = [_percent(v) for v in table[omega]]
    names_shown = {**COLUMN_LABELS, "configuration": "Configuration"}
    return pd.DataFrame(shown).rename(columns=names_shown)


def evaluation_report(
    table: pd.DataFrame,
    *,
    title: str = "Retrieval evaluation",
    caption: str = "",
    notes: Sequence[str] = (),
) -> str:
    """The HTML report of an evaluation: its table (:func:`evaluation_display`), Pass@k
    per row, and the metrics against chunk size (a sweep over sizes) or each
    technique's difference from dense retrieval (a techniques table)."""
    from ..viz.evaluation import metrics_vs_size, pass_at_k_chart, technique_deltas

    sections = ["<h2>Results</h2>", _table(evaluation_display(table))]
    sections += [f'<p class="ce-caption">{_e(n)}</p>' for n in notes]
    if table_ks(table):
        sections += ["<h2>Pass@k</h2>", figure_html(pass_at_k_chart(table), "ce-passk")]
    if "recall_delta" in table:
        sections += ["<h2>Techniques</h2>", figure_html(technique_deltas(table), "ce-deltas")]
    elif "size" in table and table["size"].nunique(dropna=True) > 1:
        sections += [
            "<h2>Metrics by chunk size</h2>",
            figure_html(metrics_vs_size(table), "ce-sizes"),
        ]
    raw = json.loads(table.to_json(orient="records"))
    sections += [
        "<h2>Data</h2>",
        "<details><summary>Every column, as JSON</summary>",
        f'<pre class="ce-code">{_e(json.dumps(raw, indent=2, ensure_ascii=False))}</pre>',
        "</details>",
    ]
    return page(title, "".join(sections), caption=caption)
