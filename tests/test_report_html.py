"""The standalone HTML reports: self-contained, escaped, with the Explore page's views;
``chunk-explorer report`` and ``evaluate --html``."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import Config
from chunking.cli import main
from chunking.core import run
from chunking.documents.io import Document, read_path
from chunking.evaluation.core import Settings, evaluate
from chunking.evaluation.passk import with_k_columns
from chunking.evaluation.questions import Question, Reference
from chunking.evaluation.sweep import results_table
from chunking.evaluation.techniques import Technique
from chunking.output.html_report import document_report, evaluation_report
from tests.conftest import SAMPLE_DOCS, write

HOSTILE = (
    "A document that contains markup.\n\n"
    "<script>alert(1)</script>\n"
    "<img src=x onerror=alert(2)>\n"
    '<a href="javascript:alert(3)">x</a>\n'
    "<!-- hidden --></div></pre></body>\n"
    "It must all be shown as text.\n"
)
#: Every element a report is made of; document text must never add one.
REPORT_TAGS = {
    *("html", "head", "meta", "title", "style", "script", "body", "main", "footer"),
    *("h1", "h2", "h3", "p", "b", "div", "span", "pre", "details", "summary"),
    *("table", "thead", "tbody", "tr", "th", "td"),
}


class Tags(HTMLParser):
    """Every start tag of a page and the ``src``/``href`` attributes it carries."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.links += [v or "" for k, v in attrs if k in ("src", "href", "srcset")]


def parse(page: str) -> Tags:
    tags = Tags()
    tags.feed(page)
    return tags


def doc(text: str, name: str = "notes.md") -> Document:
    return Document(text=text, name=name, kind="markdown", encoding="utf-8")


@pytest.fixture(scope="module")
def guide_page() -> str:
    document = read_path(SAMPLE_DOCS / "technical_guide.md")
    config = Config.create("recursive", size=300, unit="tokens")
    return document_report(document, config, compare=[Config.create("markdown")])


def test_report_is_one_self_contained_file(guide_page):
    tags = parse(guide_page)
    assert tags.links == []  # no script, style, image or link loaded from anywhere
    assert "link" not in tags.tags and "iframe" not in tags.tags
    assert tags.tags.count("script") >= 4  # plotly itself, then one per figure
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", guide_page, re.S)
    assert len(scripts[0]) > 1_000_000 and "Plotly" in scripts[0]  # inlined, not fetched
    assert set(tags.tags) <= REPORT_TAGS


def test_report_holds_the_explore_views(guide_page):
    document = read_path(SAMPLE_DOCS / "technical_guide.md")
    chunks = run(document.text, Config.create("recursive", size=300, unit="tokens"))
    # the boundary view: every chunk marked, hover details as in Explore
    assert guide_page.count('class="ce-mark"') == len(chunks)
    first = chunks[0]
    assert f"Chunk 0: start {first.start}, end {first.end}, size {first.size} tokens" in guide_page
    # the histogram: one value per chunk, the limit drawn
    figure = re.search(r'Plotly\.newPlot\(\s*"ce-histogram",\s*(\[.*?\]),\s*\{', guide_page, re.S)
    assert figure is not None and len(json.loads(figure.group(1))[0]["x"]) == len(chunks)
    assert "limit 300" in guide_page
    # statistics, warnings, configuration and code
    assert "Sizes in every unit" in guide_page and "too long for all-MiniLM-L6-v2" in guide_page
    assert html.escape(Config.create("recursive", size=300, unit="tokens").to_json()) in guide_page
    assert "RecursiveCharacterTextSplitter" in guide_page  # the LangChain export
    # the comparison
    assert 'id="ce-strip"' in guide_page and "B · Markdown sections" in guide_page


def plot_layout(page: str, div_id: str) -> dict:
    """The layout that ``Plotly.newPlot`` gets for the figure drawn in ``div_id``."""
    start = re.search(r'Plotly\.newPlot\(\s*"' + div_id + r'",\s*', page)
    assert start is not None, div_id
    decoder = json.JSONDecoder()
    _, end = decoder.raw_decode(page, start.end())  # the traces
    layout, _ = decoder.raw_decode(page, re.compile(r",\s*").match(page, end).end())
    return layout


@pytest.mark.parametrize("div_id", ["ce-histogram", "ce-histograms"])
def test_histograms_leave_room_for_tick_labels_and_axis_titles(guide_page, div_id):
    """A standalone page lays plots out as they are: with 10 px margins the y tick labels
    were clipped ("50" read "i0") and the x title sat on the x tick labels."""
    layout = plot_layout(guide_page, div_id)
    margin = layout["margin"]
    assert margin["l"] >= 50 and margin["b"] >= 50 and margin["t"] >= 50
    axes = {k: v for k, v in layout.items() if re.fullmatch(r"[xy]axis\d*", k)}
    assert any(k.startswith("x") for k in axes) and any(k.startswith("y") for k in axes)
    for name, axis in axes.items():
        assert axis.get("automargin") is True, name
        if name.startswith("x"):
            assert axis["title"]["standoff"] >= 8, name


def test_hostile_text_and_name_are_shown_as_text():
    page = document_report(
        doc(HOSTILE, name='<img src=x onerror="alert(9)">.md'),
        Config.create("recursive", size=40, unit="chars"),
        compare=[Config.create("fixed", size=25, overlap=0)],
    )
    tags = parse(page)
    assert set(tags.tags) <= REPORT_TAGS and tags.links == []
    for line in HOSTILE.splitlines()[2:5]:
        assert line not in page  # never verbatim
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "&lt;img src=x onerror=&quot;alert(9)&quot;&gt;.md" in page


@given(st.text(alphabet=st.sampled_from("<>&\"'/ab =!-\n"), min_size=1, max_size=80))
def test_any_text_adds_no_element(text):
    if not text.strip():
        return
    page = document_report(doc(text), Config.create("fixed", size=7, overlap=0))
    tags = parse(page)
    assert set(tags.tags) <= REPORT_TAGS and tags.links == []


# ---------------------------------------------------------------- evaluation report


def test_evaluation_report_draws_pass_at_k():
    docs = {
        "one": "Cats purr when content.\n\nDogs bark at <strangers>.\n\nFish swim in schools.",
        "two": "Bread needs yeast.\n\nCheese needs milk.\n\nWine needs grapes.",
    }
    questions = [
        Question(0, "Why do dogs bark?", "one", (Reference(25, 50, docs["one"][25:50]),)),
        Question(1, "What does cheese need?", "two", (Reference(21, 39, docs["two"][21:39]),)),
    ]
    evaluation = evaluate(
        docs,
        questions,
        Config.create("recursive", size=30, unit="chars"),
        None,
        Settings(top_k=3, scope="all"),
        technique=Technique(retriever="bm25"),
    )
    table = with_k_columns(results_table([evaluation]), [evaluation], docs, [1, 3])
    page = evaluation_report(table, caption="two <toy> documents", notes=["a <b>note</b>"])
    tags = parse(page)
    assert set(tags.tags) <= REPORT_TAGS and tags.links == []
    assert "Pass@1" in page and "Pass@3" in page and 'id="ce-passk"' in page
    assert "two &lt;toy&gt; documents" in page and "a &lt;b&gt;note&lt;/b&gt;" in page


# ----------------------------------------------------------------------------- CLI


def test_report_command_writes_the_file(tmp_path, capsys):
    source = write(tmp_path / "hostile.md", HOSTILE)
    other = write(tmp_path / "b.json", Config.create("fixed", size=30, overlap=0).to_json())
    out = tmp_path / "report.html"
    argv = ["report", str(source), "--strategy", "recursive", "--size", "60"]
    assert main([*argv, "--compare", str(other), "--output", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'id="ce-strip"' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "wrote" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--compare", "missing.json", "-o", "r.html"], "missing.json was not found"),
        (["--strategy", "nope", "-o", "r.html"], "unknown strategy 'nope'"),
    ],
)
def test_report_command_bad_usage_is_one_line(tmp_path, capsys, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    source = write(tmp_path / "a.md", "Some text.\n")
    assert main(["report", str(source), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not Path("r.html").exists()


def test_report_command_needs_an_output(tmp_path, capsys):
    source = write(tmp_path / "a.md", "Some text.\n")
    assert main(["report", str(source)]) == 2
    assert "--output" in capsys.readouterr().err


def test_evaluate_html_writes_the_tables_and_charts(tmp_path, chroma_dir):
    out = tmp_path / "evaluation.html"
    argv = ["evaluate", "--dataset", str(chroma_dir), "--corpus-id", "state_of_the_union"]
    argv += ["--retriever", "bm25", "--model", "none", "--size", "200", "400", "--unit", "tokens"]
    assert main([*argv, "--top-k", "5", "10", "--html", str(out), "-q"]) == 0
    page = out.read_text(encoding="utf-8")
    tags = parse(page)
    assert set(tags.tags) <= REPORT_TAGS and tags.links == []
    for needle in ("Pass@5", "Pass@10", "Recall@10", 'id="ce-passk"', 'id="ce-sizes"'):
        assert needle in page
    assert "chroma-eval" in page
