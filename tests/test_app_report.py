"""Issue 25 in the app (AppTest): the Evaluate page offers both data sets and runs the
code set on its own chunks with Pass@k at every k; Explore and Compare offer the
standalone HTML report, built only when it is downloaded. The fast fake model ("hash")
stands in where the test is about the page, not about retrieval quality."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

import chunking.output.html_report as html_report
from chunking.embedding.models import get_embedder
from chunking.evaluation import Settings, question_counts
from chunking.evaluation.datasets import CODE, evaluate_given, find_dataset, load_dataset
from chunking.evaluation.passk import k_display, with_k_columns
from chunking.evaluation.sweep import COLUMN_LABELS
from pages import evaluate_code_set, evaluate_questions, sidebar
from pages.state import EXPLORE_TAB_KEY

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PAGE = str(ROOT / "pages" / "evaluate_page.py")
TIMEOUT = 240
HOSTILE = (
    "Title\n\n<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n"
    '<a href="javascript:alert(3)">x</a>\n<!-- hidden -->\nThe end.\n'
)
#: A tag that would make the browser fetch something from the network.
REMOTE = re.compile(r"""<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*["']?(https?:)?//""")


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Callable[[], Any]]]:
    """What each deferred download button would build when clicked, by file name: the
    callable the page handed to ``st.download_button``, as the browser's click runs it."""
    made: dict[str, Callable[[], Any]] = {}
    original = MediaFileManager.add_deferred

    def record(self: MediaFileManager, data: Callable[[], Any], *args: Any, **kwargs: Any) -> str:
        name = kwargs.get("file_name") or (args[2] if len(args) > 2 else None)
        made[str(name)] = data
        return original(self, data, *args, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    yield made


@pytest.fixture
def report_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the document reports built (the pages import it on every run)."""
    calls: list[int] = []
    original = html_report.document_report

    def counted(*args: Any, **kwargs: Any) -> str:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(html_report, "document_report", counted)
    return calls


def _frame_with(at: AppTest, column: str) -> pd.DataFrame:
    """The last table on the page with ``column`` (AppTest does not keep tables' keys)."""
    return [d.value for d in at.dataframe if column in d.value.columns][-1]


def _self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    assert REMOTE.search(page) is None, REMOTE.search(page)
    assert "Plotly.newPlot" in page  # the charts are drawn by the inlined plotly


def _escaped(page: str) -> None:
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert '<a href="javascript' not in page and "<!-- hidden" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def _hostile_explore() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state[EXPLORE_TAB_KEY] = "Download and code"  # where the report is offered
    at = _ok(at.run().switch_page("pages/explore_page.py").run())
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(HOSTILE).run()
    return _ok(at)


# ------------------------------------------------------------------ Explore, Compare


def test_explore_offers_the_report_built_only_on_click(
    downloads: dict[str, Callable[[], Any]], report_calls: list[int]
) -> None:
    at = _hostile_explore()
    button = at.download_button(key="dl_report.html")
    assert button.label == "Download the report (HTML)"
    assert button.proto.deferred_file_id  # built on click, not by the run
    assert not report_calls  # neither the runs nor the rerun built it
    page = downloads["pasted text-recursive.report.html"]()
    assert report_calls == [1]
    assert isinstance(page, str)
    _self_contained(page)
    _escaped(page)
    assert "Document with chunk boundaries" in page and "Configuration and code" in page
    assert "Compared configurations" not in page


def test_compare_offers_the_report_with_the_side_by_side_strip(
    downloads: dict[str, Callable[[], Any]], report_calls: list[int]
) -> None:
    at = _hostile_explore()
    at = _ok(at.switch_page("pages/compare_page.py").run())
    at.number_input(key="cmp.count").set_value(3).run()
    _ok(at)
    button = at.download_button(key="cmp_dl_report.html")
    assert button.label == "Download the report (HTML)"
    assert not report_calls
    page = downloads["pasted text-compare.report.html"]()
    _self_contained(page)
    _escaped(page)
    assert "Compared configurations" in page and 'id="ce-strip"' in page
    # one statistics row per configuration: A (the sidebar's), B and C
    assert all(f"<td>{letter} · " in page for letter in "ABC")


# ------------------------------------------------------------------------- Evaluate


def test_evaluate_lists_both_sets_and_runs_the_code_set_on_its_own_chunks(
    downloads: dict[str, Callable[[], Any]],
) -> None:
    dataset = load_dataset(find_dataset(CODE))
    counts = question_counts(dataset.questions)
    # a file with a few questions keeps the test short; every file is still searched
    doc = min((d for d in counts if counts[d] >= 3), key=lambda d: (counts[d], d))
    at = _ok(AppTest.from_file(PAGE, default_timeout=TIMEOUT).run())
    origin = at.radio(key="eval.origin")
    assert (
        evaluate_questions.BUNDLED in origin.options
        and evaluate_code_set.CODE_SET in origin.options
    )
    origin.set_value(evaluate_code_set.CODE_SET).run()
    _ok(at)
    assert any(dataset.attribution in c.value for c in at.caption)
    files = _frame_with(at, "characters")
    assert len(files) == len(dataset.documents) and files["chunks"].sum() == 737
    assert dataset.titles[doc] in files["document"].tolist()  # the files by their names
    at.multiselect(key="eval.code_about").set_value([doc])
    at.selectbox(key="eval.code_model").set_value("hash")
    at.text_input(key="eval.code_ks").set_value("5, 10, 20")
    next(b for b in at.button if b.label == "Run on the code set").click()
    _ok(at.run())

    shown = _frame_with(at, "Pass@20")
    subset = dataset.about([doc])
    expected = evaluate_given(subset, get_embedder("hash"), Settings(top_k=20, scope="all"))
    ks = [5, 10, 20]
    table = with_k_columns(expected.table, expected.evaluations, subset.documents, ks, None)
    for label, values in k_display(table).items():
        assert shown[label].tolist() == values, label
    passes = [float(shown[f"Pass@{k}"].iloc[0]) for k in (5, 10, 20)]
    assert passes == sorted(passes)  # more chunks retrieved never find fewer
    assert len(at.get("plotly_chart")) == 1

    page = downloads["anthropic-code-eval-code.html"]()
    _self_contained(page)
    assert "Pass@20" in page and dataset.attribution in page

    next(b for b in at.button if b.label == "Compare techniques").click()
    _ok(at.run())
    technique = COLUMN_LABELS["technique"]  # the tables show their columns' human names
    techniques = _frame_with(at, technique)
    # the fake model has no token vectors (no late rows); given chunks have no parents
    assert techniques[technique].tolist() == ["dense", "bm25", "hybrid", "headers", "window:1"]
    assert techniques["Pass@5"].iloc[0] == shown["Pass@5"].iloc[0]  # dense = the run above
