"""A big document is measured with progress (issue 37, point 4): the core's sentence
segmenting and report tell a callback how far they are, with the same spans and report
as without it, and the shared sentences stay shared (the callback is not their key);
the app draws a progress bar for a document of a few megabytes and opens it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from chunking import Config, run
from chunking.analysis.report import SENTENCES_SHARE, make_report
from chunking.documents.io import Document
from chunking.engine import spans
from chunking.engine.spans import SEGMENTING, document_sentences, sentence_spans
from chunking.model import STEPS
from pages import cached, sidebar

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
BOOK = (ROOT.parent / "shared" / "datasets" / "books" / "pride_and_prejudice.txt").read_text()

Call = tuple[int, int, str]


def _recorder() -> tuple[list[Call], object]:
    calls: list[Call] = []
    return calls, lambda done, total, what: calls.append((done, total, what))


def _check_calls(calls: list[Call], total: int) -> None:
    assert calls, "no progress reported"
    assert all(t == total for _, t, _ in calls), calls
    done = [d for d, _, _ in calls]
    assert done == sorted(done), done  # never backwards
    assert done[-1] == total  # ends at the whole
    assert all(0 <= d <= total for d in done)


PIECES = ["Hello world. ", "Dr. Who? ", "是的。", "「好！」", "\n\n", "\n \n", "1. ", "IV.\n"]
PIECES += ["x", " ", "\n", "３．５", "」", "！？", "\n\u00a0\n", "(b) "]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


@settings(max_examples=150, deadline=None)
@given(TEXTS, st.integers(min_value=1, max_value=40))
def test_spans_are_the_same_with_a_callback_and_it_runs_forward_to_the_end(
    text: str, block: int
) -> None:
    calls, progress = _recorder()
    with mock.patch.object(spans, "PROGRESS_CHARS", block):  # many blocks, small texts
        with_progress = sentence_spans(text, progress)  # type: ignore[arg-type]
    assert with_progress == sentence_spans(text)
    _check_calls(calls, len(text))
    assert {what for _, _, what in calls} == {SEGMENTING}


def test_a_long_text_reports_every_block_not_every_sentence() -> None:
    text = BOOK * 2
    calls, progress = _recorder()
    found = sentence_spans(text, progress)  # type: ignore[arg-type]
    assert found == sentence_spans(text)
    _check_calls(calls, len(text))
    assert len(text) // spans.PROGRESS_CHARS <= len(calls) <= len(text) // spans.PROGRESS_CHARS + 1
    assert len(calls) < len(found) / 100


def test_the_shared_sentences_are_kept_whatever_the_callback() -> None:
    text = "A text segmented once in this test module. " + BOOK
    first_calls, first = _recorder()
    shared = document_sentences(text, first)  # type: ignore[arg-type]
    _check_calls(first_calls, len(text))
    again_calls, again = _recorder()
    assert document_sentences(text, again) is shared  # type: ignore[arg-type]
    assert document_sentences(text) is shared
    assert again_calls == []  # found, not segmented: nothing to report
    assert shared == tuple(sentence_spans(text))
    # the callback is not kept after the call: a later call without one reports nothing
    reported = len(first_calls)
    edited = text + " One more sentence."
    assert document_sentences(edited) == tuple(sentence_spans(edited))
    assert len(first_calls) == reported


def test_the_report_is_the_same_with_progress_and_says_what_it_does() -> None:
    text = "A report measured in this test module. " + BOOK
    document = Document(text=text, name="book.txt", kind="text", encoding=None)
    config = Config.create("recursive", size=800, unit="chars")
    chunks = run(text, config)
    calls, progress = _recorder()
    measured = make_report(document, config, chunks, progress=progress)  # type: ignore[arg-type]
    assert measured == make_report(document, config, chunks)
    _check_calls(calls, STEPS)
    whats = [what for _, _, what in calls]
    segmenting = [w for w in whats if w.startswith(SEGMENTING)]
    megabytes = len(text.encode()) / 1e6
    assert segmenting and segmenting[-1] == f"{SEGMENTING}: {megabytes:.1f} of {megabytes:.1f} MB"
    assert max(d for d, _, w in calls if w.startswith(SEGMENTING)) == round(SENTENCES_SHARE * STEPS)
    assert "Measuring chunk sizes" in whats and "Finding warnings" in whats
    # known sentences (segmented above, shared): no segmenting to report, still to the end
    calls, progress = _recorder()
    make_report(document, config, chunks, progress=progress)  # type: ignore[arg-type]
    _check_calls(calls, STEPS)
    assert not [w for _, _, w in calls if w.startswith(SEGMENTING)]


# ------------------------------------------------------------------------------ app


@pytest.mark.xdist_group("big_files_apptest")
def test_a_big_upload_is_measured_with_a_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3 MB upload opens on Explore without an error, its report measured under a
    progress bar that says what it does, up to the whole text."""
    data = ("A 3 MB upload with a progress bar.\n\n" + BOOK * 5)[: 3 * 2**20].encode()
    assert len(data) >= cached.PROGRESS_MIN_CHARS
    seen: list[tuple[str, Call]] = []
    real = cached.progress_bar

    @contextlib.contextmanager
    def watched(label: str) -> Iterator[cached.Progress]:
        with real(label) as show:

            def record(done: int, total: int, what: str) -> None:
                seen.append((label, (done, total, what)))
                show(done, total, what)  # draws the real bar

            yield record

    monkeypatch.setattr(cached, "progress_bar", watched)
    at = AppTest.from_file(APP, default_timeout=300).run()
    at = at.switch_page("pages/explore_page.py").run()
    at = at.radio(key=sidebar.SOURCE_KEY).set_value("Upload").run()
    at = at.file_uploader(key=sidebar.UPLOAD_KEY).set_value(("big.txt", data, "text/plain"))
    at = at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [str(e.value) for e in at.error]
    assert at.session_state["_ce_source"].document.text == data.decode()
    assert {label for label, _ in seen} == {"Measuring chunks"}
    _check_calls([call for _, call in seen], STEPS)
    assert any(
        what.startswith(f"{SEGMENTING}: ") and what.endswith(" MB") for _, (_, _, what) in seen
    )
    assert not at.get("progress")  # the bar is gone once the report is there
