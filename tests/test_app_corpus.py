"""AppTest tests for the Corpus page: loading a corpus, its table against the core,
refusals, opening a document in Explore, the comparison, and what survives a page change.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pandas as pd
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.testing.v1 import AppTest

import chunking
from chunking.analysis import corpus_stats
from chunking.documents.io import read_path
from pages import cached, sidebar
from tests.conftest import make_zip

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 180
UPLOAD = "corpus.upload"
TEXT = "A short note about chunking.\n\nIt has two paragraphs, each one sentence long.\n"


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    return _ok(at.switch_page("pages/corpus_page.py").run())


def _samples() -> AppTest:
    at = _page()
    return _ok(at.button(key="corpus.samples").click().run())


def _upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    chosen = [(name, data, "application/octet-stream") for name, data in files]
    return _ok(at.file_uploader(key=UPLOAD).set_value(chosen).run())


def _table(at: AppTest) -> pd.DataFrame:
    for frame in at.dataframe:
        if frame.key and frame.key.startswith("corpus_table"):
            return frame.value
    raise AssertionError("no corpus table")


def _errors(at: AppTest) -> str:
    """The error messages as shown: the page escapes Markdown in them (file names)."""
    return "\n".join(e.value for e in at.error).replace("\\", "")


def _click_row(at: AppTest, row: int) -> AppTest:
    """Select a row of the corpus table as the browser does (AppTest has no API for it)."""
    table = next(f for f in at.dataframe if f.key and f.key.startswith("corpus_table"))
    states = WidgetStates()
    states.CopyFrom(at._tree.get_widget_states())
    state = states.widgets.add()
    state.id = table.proto.id
    state.string_value = json.dumps({"selection": {"rows": [row], "columns": [], "cells": []}})
    at._run(states)
    return _ok(at)


def test_without_a_corpus_the_page_says_how_to_load_one() -> None:
    at = _page()
    assert "use the bundled samples" in at.info[0].value
    assert not at.dataframe


def test_the_samples_as_a_corpus_match_the_core() -> None:
    at = _samples()
    table = _table(at).set_index("document")
    names = sidebar.sample_names()
    assert sorted(table.index) == sorted(names)
    config = chunking.Config.create("recursive")
    for name in names:
        chunks = chunking.run(read_path(sidebar.sample_dir() / name).text, config)
        assert table.loc[name, "chunks"] == len(chunks), name
        assert table.loc[name, "max (chars)"] == max(c.size for c in chunks)
    # small corpora are checked against the model's window from the start
    assert "over window" in table.columns
    warnings = list(_table(at)["warnings"])
    assert warnings == sorted(warnings, reverse=True)  # most warnings first
    assert any(chart.key == "corpus_histogram" for chart in at.get("plotly_chart"))


def test_uploaded_files_and_a_zip_with_an_unreadable_member() -> None:
    archive = make_zip(
        {"docs/a.md": b"# Title\n\n" + TEXT.encode(), "docs/blob.txt": bytes(range(256)) * 8}
    )
    at = _upload(_page(), ("note.txt", TEXT.encode()), ("more.zip", archive))
    table = _table(at).set_index("document")
    assert sorted(table.index) == ["docs/a.md", "docs/blob.txt", "note.txt"]
    assert "binary" in table.loc["docs/blob.txt", "error"]
    assert table.loc["docs/blob.txt", "chunks"] == 0
    assert table.loc["note.txt", "chunks"] == len(chunking.chunk(TEXT))
    assert table.loc["docs/a.md", "type"] == "markdown"
    assert _metric(at, "Not read or cut") == "1"


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ([("evil.zip", make_zip({"../outside.txt": b"x"}))], "leaves the archive"),
        ([("bomb.zip", make_zip({"zeros.txt": b"0" * 3_000_000}))], "zip bomb"),
        ([("broken.zip", b"not a zip at all")], "not a valid zip"),
        (
            [("many.zip", make_zip({f"n/{i}.txt": b"x" for i in range(1001)}))],
            "more than 1,000 files",
        ),
    ],
    ids=["escaping path", "zip bomb", "not a zip", "too many files"],
)
def test_refused_uploads_say_why_and_keep_the_corpus(files, expected: str) -> None:
    at = _upload(_samples(), *files)
    assert expected in _errors(at)
    assert len(_table(at)) == len(sidebar.sample_names())  # the samples are still loaded


def test_a_document_over_the_size_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sidebar.MAX_MB_ENV, "0.001")  # about 1 KB per document
    at = _upload(_page(), ("big.txt", b"word " * 1000))
    assert "over the 1 KB limit for one document" in _errors(at)
    assert not at.dataframe


def test_changing_only_the_view_recomputes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = corpus_stats.document_stats

    def counted(doc, config, piece_starts=None):
        calls.append(doc.name)
        return real(doc, config, piece_starts)

    monkeypatch.setattr(corpus_stats, "document_stats", counted)
    at = _samples()
    assert len(calls) == len(sidebar.sample_names())
    at.selectbox(key="corpus.sort").set_value("name").run()
    at.selectbox(key="corpus.show").set_value("warnings").run()
    _ok(at)
    assert list(_table(at)["document"]) == sorted(_table(at)["document"])
    assert len(calls) == len(sidebar.sample_names())
    at.number_input(key="recursive.size").set_value(400).run()  # a new configuration
    assert len(calls) == 2 * len(sidebar.sample_names())


def test_the_window_check_can_be_turned_off() -> None:
    at = _samples()
    with_window = _table(at).set_index("document")
    at.toggle(key="corpus.window").set_value(False).run()
    without = _table(_ok(at)).set_index("document")
    assert "over window" not in without.columns
    assert _metric(at, "Over the model's window") == "—"
    # the chunks over the window no longer count as warnings
    for name in without.index:
        assert without.loc[name, "warnings"] == (
            with_window.loc[name, "warnings"] - with_window.loc[name, "over window"]
        )


def test_the_sidebar_configuration_drives_the_table() -> None:
    at = _samples()
    at.number_input(key="recursive.size").set_value(300).run()
    table = _table(_ok(at)).set_index("document")
    text = read_path(sidebar.sample_dir() / "long_essay.txt").text
    assert table.loc["long_essay.txt", "chunks"] == len(chunking.chunk(text, size=300))


def test_a_click_on_a_sample_opens_it_in_explore() -> None:
    at = _samples()
    table = _table(at)
    row = next(i for i, name in enumerate(table["document"]) if name != sidebar.DEFAULT_SAMPLE)
    name = table["document"][row]
    _click_row(at, row)
    assert at.title[0].value == "Explore"
    assert at.session_state[sidebar.SOURCE_KEY] == "Sample"
    assert at.session_state[sidebar.SAMPLE_KEY] == name
    assert name in at.caption[0].value


def test_a_click_on_an_uploaded_document_opens_it_in_explore_with_its_name() -> None:
    at = _upload(_page(), ("notes/note.md", TEXT.encode("cp1252")))
    _click_row(at, 0)
    assert at.title[0].value == "Explore"
    assert at.session_state[sidebar.SOURCE_KEY] == "Upload"
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "note.md, opened from the Corpus page" in captions
    assert "markdown" in captions  # its type, as the corpus read it
    assert next(m.value for m in at.metric if m.label == "Chunks") == str(len(chunking.chunk(TEXT)))


def test_an_unreadable_document_cannot_be_opened() -> None:
    at = _upload(_page(), ("blob.txt", bytes(range(256)) * 8))
    _click_row(at, 0)
    assert at.title[0].value == "Corpus"
    assert "blob.txt cannot be opened" in _errors(at)


def test_the_corpus_survives_a_visit_to_another_page() -> None:
    at = _upload(_page(), ("note.txt", TEXT.encode()), ("other.md", b"# Other\n\nText.\n"))
    at.switch_page("pages/explore_page.py").run()
    at.switch_page("pages/corpus_page.py").run()
    assert sorted(_table(_ok(at))["document"]) == ["note.txt", "other.md"]


@pytest.mark.slow
def test_comparing_configurations_over_the_corpus() -> None:
    at = _samples()
    at.number_input(key="recursive.size").set_value(1000).run()  # A: the sidebar's
    at.toggle(key="corpus.compare").set_value(True).run()
    at.number_input(key="corpus.count").set_value(3).run()
    at.selectbox(key="corpus.B.strategy").set_value("recursive").run()
    at.number_input(key="corpus.B.recursive.size").set_value(200).run()
    _ok(at)
    frame = next(f.value for f in at.dataframe if "median" in f.value.columns)
    assert len(frame) == 3
    texts = [read_path(sidebar.sample_dir() / n).text for n in sidebar.sample_names()]
    expected_b = sum(len(chunking.chunk(t, size=200)) for t in texts)
    assert frame["chunks"].iloc[1] == expected_b
    assert frame["max"].iloc[1] <= 200
    assert frame["over window"].iloc[1] == 0  # 200 characters never reach 256 word pieces
    assert frame["over window"].iloc[0] > 0  # 1,000 characters sometimes do
    per_doc = next(f.value for f in at.dataframe if list(f.value.columns[1:]) == list(frame.index))
    assert per_doc.iloc[:, 2].sum() == expected_b


def test_document_names_are_shown_literally() -> None:
    at = _upload(_page(), ("![x](http:__e)[y].txt", TEXT.encode()))
    caption = next(c.value for c in at.caption if "documents from" in c.value)
    assert "\\!\\[x\\]" in caption  # escaped: Markdown shows it as text, not an image


def test_the_samples_come_from_the_configured_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "first.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "second.md").write_text("# Second\n\n" + TEXT, encoding="utf-8")
    monkeypatch.setenv(sidebar.SAMPLES_ENV, str(tmp_path))
    at = _samples()
    assert sorted(_table(at)["document"]) == ["first.txt", "second.md"]
    row = list(_table(at)["document"]).index("second.md")
    _click_row(at, row)
    assert at.session_state[sidebar.SOURCE_KEY] == "Sample"
    assert at.session_state[sidebar.SAMPLE_KEY] == "second.md"


# ----------------------------------------------------------- prepared for Explore


def _recomputing_fails(
    monkeypatch: pytest.MonkeyPatch, names: tuple[str, ...] = ("run", "make_report", "recommend")
) -> None:
    """From now on, chunking, measuring or recommending anew (``names``, the core calls
    of :mod:`pages.cached`) raises: only what the caches hold can be shown."""

    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("recomputed")

    for name in names:
        monkeypatch.setattr(cached, name, fail)


def _texts(tag: str) -> list[tuple[str, bytes]]:
    """Three documents no other test has cached (``tag`` makes them unique), the most
    warnings in the first (the table's default order)."""
    long = " ".join(f"Sentence {i} of {tag} runs on and on without" for i in range(300))
    return [
        ("a_long.txt", long.encode()),
        ("b_note.txt", f"{tag}\n\n{TEXT}".encode()),
        ("c_note.txt", f"{TEXT}\n\n{tag}".encode()),
    ]


def test_the_first_rows_are_prepared_for_explore(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _texts(f"prepared-{uuid.uuid4()}")
    at = _upload(_page(), *files)
    assert not [c.value for c in at.caption if "Preparing" in c.value]  # done, and said so
    table = _table(at)
    row = list(table["document"]).index("a_long.txt")
    assert row == 0
    _recomputing_fails(monkeypatch)
    _click_row(at, row)
    assert at.title[0].value == "Explore" and not at.error, [e.value for e in at.error]
    expected = len(chunking.chunk(files[0][1].decode()))
    assert next(m.value for m in at.metric if m.label == "Chunks") == f"{expected:,}"
    assert any("Suggested for this" in m.value for m in at.sidebar.markdown)


def test_rows_past_the_first_are_left_to_explore(monkeypatch: pytest.MonkeyPatch) -> None:
    tag = f"left-{uuid.uuid4()}"
    notes = [(f"n{i}.txt", f"{TEXT}\n\nNote {i} {tag}.\n".encode()) for i in range(7)]
    at = _upload(_page(), *notes)
    assert list(_table(at)["document"]) == [name for name, _ in notes]  # no warnings: by name
    _recomputing_fails(monkeypatch, ("run",))
    _click_row(at, 6)  # the seventh row was not prepared: Explore has to chunk it, and cannot
    assert at.title[0].value == "Explore"
    assert any("failed on this document (RuntimeError: recomputed)" in e.value for e in at.error)
