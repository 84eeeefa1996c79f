"""AppTest tests for the Streamlit app: every page, its widgets and the numbers it shows.

The numbers shown are checked against the core: each test chunks the same text with
``chunking`` directly and compares.
"""

from __future__ import annotations

import html
import io
import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import chunking
from chunking.analysis.recommend import recommend
from chunking.analysis.report import agreement, boundaries, describe
from chunking.documents.io import Document, read_path
from chunking.output import export
from pages import (  # the app's modules (pytest's pythonpath has the root)
    config_controls,
    param_widgets,
    sidebar,
)
from pages.state import EXPLORE_TABS, param_key
from tests.conftest import show_explore_tab

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 120
GUIDE = read_path(ROOT / "sample_docs" / "technical_guide.md").text
HOSTILE = (
    "Title\n\n<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n"
    '<a href="javascript:alert(3)">x</a>\n<!-- hidden -->\nThe end.\n'
)


# ----------------------------------------------------------------------- helpers


def _landing(**query: str) -> AppTest:
    """The app's first run for a link with ``query``: the guided tour, the home page."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at.run()


def _app(**query: str) -> AppTest:
    """The app opened on the Explore page."""
    return _landing(**query).switch_page("pages/explore_page.py").run()


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metric(at: AppTest, label: str) -> str:
    for metric in at.metric:
        if metric.label == label:
            return metric.value
    raise AssertionError(f"no metric {label!r}; have {[m.label for m in at.metric]}")


def _count(at: AppTest) -> int:
    return int(_metric(at, "Chunks").replace(",", ""))


def _widget(at: AppTest, key: str):
    kinds = ("number_input", "selectbox", "toggle", "text_input", "slider", "checkbox")
    for kind in kinds:
        for widget in at.get(kind):
            if getattr(widget, "key", None) == key:
                return widget
    raise AssertionError(f"no widget with key {key!r}")


def _errors(at: AppTest) -> str:
    return "\n".join(e.value for e in at.error)


def _boundary_html(at: AppTest) -> list[str]:
    return [h.value for h in at.html if 'class="ce-doc"' in h.value]


def _frame_with(at: AppTest, column: str) -> pd.DataFrame:
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table with a {column!r} column")


def _upload(name: str, data: bytes, mime: str = "application/octet-stream") -> AppTest:
    at = _app()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Upload").run()
    at.file_uploader(key=sidebar.UPLOAD_KEY).set_value((name, data, mime)).run()
    return at


def _pdf(*pages: str) -> bytes:
    """A small PDF with one line of text per page (an empty string: no text)."""
    objects: list[bytes] = []
    page_ids = [3 + 2 * i for i in range(len(pages))]
    font_id = 3 + 2 * len(pages)
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{i} 0 R" for i in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for page_id, line in zip(page_ids, pages, strict=True):
        stream = f"BT /F1 14 Tf 60 720 Td ({line}) Tj ET".encode() if line else b""
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents {page_id + 1} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    body = bytearray(b"%PDF-1.4\n")
    starts = []
    for number, content in enumerate(objects, 1):
        starts.append(len(body))
        body += b"%d 0 obj\n%s\nendobj\n" % (number, content)
    xref = len(body)
    body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    body += b"".join(b"%010d 00000 n \n" % s for s in starts)
    body += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(body)


# ------------------------------------------------------------------ explore page


def test_first_screen_shows_the_technical_guide_chunked() -> None:
    at = _ok(_app())
    assert at.title[0].value == "Explore"
    assert at.selectbox(key=sidebar.SAMPLE_KEY).value == "technical_guide.md"
    chunks = chunking.chunk(GUIDE)
    assert _count(at) == len(chunks)
    summary = describe([c.size for c in chunks], "chars")
    assert _metric(at, "Mean (chars)") == f"{summary.mean:,.1f}"
    assert _metric(at, "Max (chars)") == f"{summary.max:,}"
    assert [t.label for t in at.tabs] == list(EXPLORE_TABS)
    # Only the open tab (the boundaries) is drawn: no histogram, table or download yet.
    views = _boundary_html(at)
    assert len(views) == 1 and views[0].count('class="ce-mark"') == len(chunks)
    assert not at.get("plotly_chart") and not at.dataframe
    assert [b.label for b in at.get("download_button")] == ["Download config (JSON)"]  # sidebar
    _ok(show_explore_tab(at, "Sizes"))
    assert len(at.get("plotly_chart")) == 1 and not _boundary_html(at)
    summary_table = _frame_with(at, "Std. dev.")
    assert summary_table.loc["chars", "Largest"] == summary.max
    assert not [c for c in summary_table.columns if c.islower()]
    _ok(show_explore_tab(at, "Chunks"))
    assert len(_boundary_html(at)) == 1  # the selected chunk alone
    _ok(show_explore_tab(at, "Download and code"))
    labels = {b.label for b in at.get("download_button")}
    assert {"JSONL", "CSV", "Parquet", "Config (JSON)", "Download config (JSON)"} <= labels
    assert at.query_params["strategy"] == "recursive"
    assert at.query_params["sample"] == "technical_guide.md"


def test_size_and_overlap_widgets_change_the_numbers() -> None:
    at = _ok(_app())
    at.number_input(key="recursive.size").set_value(300).run()
    _ok(at)
    assert _count(at) == len(chunking.chunk(GUIDE, size=300))
    at.number_input(key="recursive.overlap").set_value(60).run()
    _ok(at)
    chunks = chunking.chunk(GUIDE, size=300, overlap=60)
    assert _count(at) == len(chunks)
    assert _metric(at, "Min (chars)") == f"{min(c.size for c in chunks):,}"
    table = _frame_with(show_explore_tab(at, "Chunks"), "tokens")
    assert list(table["start"]) == [c.start for c in chunks]
    assert list(table["end"]) == [c.end for c in chunks]
    assert at.query_params["size"] == "300" and at.query_params["overlap"] == "60"


def test_changing_strategy_and_unit() -> None:
    at = _ok(_app())
    at.selectbox(key=config_controls.STRATEGY_KEY).set_value("fixed").run()
    _ok(at)
    assert _count(at) == len(chunking.chunk(GUIDE, "fixed"))
    at.number_input(key="fixed.size").set_value(200).run()
    at.number_input(key="fixed.overlap").set_value(20).run()
    at.selectbox(key="fixed.unit").set_value("words").run()
    _ok(at)
    assert _count(at) == len(chunking.chunk(GUIDE, "fixed", size=200, overlap=20, unit="words"))
    assert _metric(at, "Max (words)") == "200"


@pytest.mark.parametrize("name", list(chunking.strategies()))
def test_every_strategy_renders_with_its_defaults(name: str) -> None:
    at = _ok(_app())
    at.selectbox(key=config_controls.STRATEGY_KEY).set_value(name).run()
    spec = chunking.get_strategy(name)
    # the registry's defaults, but an embedding model at the app's full-quality model
    started = {p.name: v for p in spec.params if (v := param_widgets.param_start(p)) != p.default}
    try:
        expected = len(chunking.chunk(GUIDE, name, **started))
    except ValueError as exc:  # a library that cannot run here (chonkie.code offline)
        assert not at.exception
        assert any(str(exc) in e.value for e in at.error), str(exc)
    else:
        _ok(at)
        assert _count(at) == expected
    for param in chunking.get_strategy(name).params:  # a widget with help for each
        widget = _widget(at, param_key(name, param.name))
        assert widget.help.startswith(param.help)


def test_overlap_not_below_size_shows_an_error_not_a_traceback() -> None:
    at = _ok(_app())
    at.number_input(key="recursive.size").set_value(100).run()
    at.number_input(key="recursive.overlap").set_value(100).run()
    _ok(at)
    message = _errors(at)
    assert "overlap (100) must be smaller than size (100)" in message
    assert "Fix it in the sidebar" in message
    assert not at.metric
    assert [t.value for t in at.title] == ["Explore"]  # the page stays, with the error in place
    assert any("overlap (100)" in e.value for e in at.main.error)


def test_invalid_json_list_parameter_is_reported() -> None:
    at = _ok(_app())
    at.text_input(key="recursive.separators").set_value("[not json").run()
    _ok(at)
    assert "separators must be a list of strings" in _errors(at)


def test_selecting_a_chunk_shows_it_alone_with_its_metadata() -> None:
    at = _ok(show_explore_tab(_app(), "Chunks"))
    at.number_input(key="recursive.size").set_value(120).run()
    chunks = chunking.chunk(GUIDE, size=120)
    at.number_input(key="explore.chunk").set_value(len(chunks) - 1).run()
    _ok(at)
    last = chunks[-1]
    (alone,) = _boundary_html(at)  # the selected chunk, drawn on its own
    assert alone.count('class="ce-mark"') == 1 and f'data-i="{last.index}"' in alone
    assert html.unescape(re.sub(r"<[^>]+>", "", alone)) == last.text
    details = at.json[0].value
    details = json.loads(details) if isinstance(details, str) else details
    assert (details["index"], details["start"], details["end"]) == (
        last.index,
        last.start,
        last.end,
    )
    # the boundary view jumped to the page holding that chunk
    assert f'data-i="{last.index}"' in _boundary_html(show_explore_tab(at, "Boundaries"))[0]


def test_large_documents_are_drawn_a_page_at_a_time() -> None:
    big = "".join(f"Paragraph {i}. " + "Some filler words here. " * 12 + "\n\n" for i in range(900))
    at = _ok(_app())
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(big).run()
    _ok(at)
    chunks = chunking.chunk(big)
    assert _count(at) == len(chunks)
    page_input = at.number_input(key="explore.page")
    assert page_input.max > 1
    view = _boundary_html(at)[0]
    assert view.count('class="ce-mark"') <= 50
    assert len(view) < 20 * 50_000  # one page of text plus markup, not the whole document
    page_input.set_value(2).run()
    _ok(at)
    assert 'data-i="0"' not in _boundary_html(at)[0]


def test_hostile_markup_is_escaped_in_the_boundary_view() -> None:
    at = _ok(_app())
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(HOSTILE).run()
    _ok(at)
    view = _boundary_html(at)[0]
    assert "<script" not in view and "<img" not in view and "<a " not in view
    assert "<!--" not in view
    assert "&lt;script&gt;" in view and "&lt;!-- hidden --&gt;" in view


def test_empty_paste_asks_for_text() -> None:
    at = _ok(_app())
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    _ok(at)
    assert any("Paste some text" in i.value for i in at.info)
    assert any("Paste some text" in w.value for w in at.warning)
    assert not at.metric


# ------------------------------------------------------------------------ links


def test_the_home_page_is_the_tour_with_the_loaded_document_already_cut() -> None:
    at = _ok(_landing())
    assert [t.value for t in at.title] == ["A guided tour of chunking"]
    summary = next(m.value for m in at.markdown if m.value.startswith("**Loaded now:**"))
    assert "technical_guide.md" in summary
    assert f"**{len(chunking.chunk(GUIDE)):,} chunks**" in summary
    assert [link.proto.label for link in at.get("page_link")] == ["See them in Explore"]


def test_a_link_reproduces_the_view() -> None:
    at = _ok(_app(strategy="fixed", size="250", overlap="25", sample="support_chat.txt"))
    text = read_path(ROOT / "sample_docs" / "support_chat.txt").text
    assert at.selectbox(key=sidebar.SAMPLE_KEY).value == "support_chat.txt"
    assert at.selectbox(key=config_controls.STRATEGY_KEY).value == "fixed"
    assert _count(at) == len(chunking.chunk(text, "fixed", size=250, overlap=25))


def test_bad_values_in_a_link_are_reported_and_ignored() -> None:
    at = _ok(_landing(strategy="recursive", size="abc", sample="nope.txt"))
    shown = "\n".join(w.value for w in at.warning)
    assert "size must be an integer" in shown
    assert "sample 'nope.txt' does not exist" in shown
    at.switch_page("pages/explore_page.py").run()
    assert _count(at) == len(chunking.chunk(GUIDE))


def test_a_link_naming_a_sample_without_any_samples_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Regression: an empty sample folder and ?sample=... raised IndexError (samples[0]).
    monkeypatch.setattr(sidebar, "SAMPLE_DIR", tmp_path)
    at = _ok(_landing(sample="technical_guide.md", strategy="fixed"))
    shown = "\n".join(w.value for w in at.warning)
    assert "sample 'technical_guide.md' does not exist" in shown
    assert "no sample documents" in shown
    assert any("No sample documents were found" in i.value for i in at.info)
    assert not at.get("selectbox") or all(s.key != sidebar.SAMPLE_KEY for s in at.selectbox)
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value("One sentence. Another one.").run()
    at.switch_page("pages/explore_page.py").run()
    assert _count(_ok(at)) == len(chunking.chunk("One sentence. Another one.", "fixed"))


def test_a_sample_added_while_the_server_runs_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing is kept between reruns, and read again when the folder changes."""
    (tmp_path / "b.txt").write_text("Second.", encoding="utf-8")
    monkeypatch.setenv(sidebar.SAMPLES_ENV, str(tmp_path))
    assert sidebar.sample_names() == ["b.txt"]
    (tmp_path / "a.md").write_text("# First", encoding="utf-8")
    os.utime(tmp_path, ns=(1, 1))  # the folder changed, whatever the clock's resolution
    assert sidebar.sample_names() == ["a.md", "b.txt"]


def test_the_sample_folder_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes.txt").write_text("Only this sample. It is short.", encoding="utf-8")
    monkeypatch.setenv(sidebar.SAMPLES_ENV, str(tmp_path))
    assert sidebar.sample_names() == ["notes.txt"]
    at = _ok(_app())
    assert at.selectbox(key=sidebar.SAMPLE_KEY).options == ["notes.txt"]
    assert _count(at) == len(chunking.chunk("Only this sample. It is short."))
    monkeypatch.setenv(sidebar.SAMPLES_ENV, str(tmp_path / "missing"))
    assert sidebar.sample_names() == []
    assert sidebar.query_to_state({"sample": "notes.txt"}, []) == (
        {},
        ["sample 'notes.txt' does not exist: there are no sample documents"],
    )


def _subset_of_semantic_params() -> None:
    from pages import param_widgets

    param_widgets.param_controls(
        "semantic", ("threshold", "buffer_size", "model"), lambda n: f"s.{n}"
    )


def test_page_controls_come_from_the_registry() -> None:
    at = _ok(AppTest.from_function(_subset_of_semantic_params, default_timeout=TIMEOUT).run())
    spec = chunking.get_strategy("semantic")
    threshold, buffer = at.number_input(key="s.threshold"), at.number_input(key="s.buffer_size")
    assert (threshold.value, threshold.min, threshold.help) == (
        spec.param("threshold").default,
        spec.param("threshold").minimum,
        spec.param("threshold").help,
    )
    assert (buffer.value, buffer.min, buffer.max) == (1, 0, 10)
    # the model starts where the app's full-quality views do (param_widgets.param_start)
    assert at.text_input(key="s.model").value == param_widgets.param_start(spec.param("model"))
    assert at.text_input(key="s.model").help == spec.param("model").help
    assert len(at.number_input) + len(at.text_input) == 3  # only the parameters asked for


def test_the_evaluate_page_reads_the_sidebars_document_only() -> None:
    # Regression: a session key that only a test wrote ("document_text") was preferred
    # to the sidebar's document.
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["document_text"] = "A different text that nobody chose in the sidebar."
    at.run()
    _ok(at.switch_page("pages/evaluate_page.py").run())
    captions = "\n".join(c.value for c in at.caption)
    assert f"Document: **technical_guide.md** ({len(GUIDE):,} characters)" in captions
    assert "the app's document" not in captions


@pytest.mark.slow
def test_playground_highlights_the_top_chunks_of_the_sidebars_document() -> None:
    hostile = "<script>alert(1)</script> Cats purr softly.\n\n" + GUIDE[:3000]
    at = _ok(_landing())
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(hostile).run()
    at.number_input(key="recursive.size").set_value(100).run()  # the sidebar's config
    _ok(at.switch_page("pages/evaluate_page.py").run())
    at.selectbox(key="eval.pg_model").set_value("hash")
    at.number_input(key="eval.pg_k").set_value(3)
    at.text_input(key="eval.pg_query").set_value("Cats purr softly")
    _ok(at.run())
    hits = next(d.value for d in at.dataframe if "rank" in d.value.columns)
    assert hits["rank"].tolist() == [1, 2, 3]
    assert hits["score"].is_monotonic_decreasing
    chunks = chunking.chunk(hostile, "recursive", size=100, unit="chars")
    assert "Cats purr softly" in chunks[int(hits["chunk"].iloc[0])].text
    markup = [h.value for h in at.html if 'class="ev-doc"' in h.value][-1]
    assert "<script>alert" not in markup and "&lt;script&gt;" in markup
    assert markup.count('class="ev-rank"') == 3


def _widgets_for_every_kind() -> None:
    from chunking import Param
    from pages import param_widgets

    for param in (
        Param("threshold", float, 0.5, "How similar.", minimum=0.0, maximum=1.0),
        Param("ratio", float, 1.5, "Any positive number.", minimum=0.0),
        Param("count", int, 3, "A whole number.", minimum=1, maximum=9),
        Param("flag", bool, True, "A switch."),
        Param("names", list, ["a", "b"], "Some names."),
        Param("model", str, "m1", "Which one.", choices=("m1", "m2")),
        Param("label", str, "x", "Free text."),
    ):
        param_widgets.param_widget(param, f"t.{param.name}")


def test_a_widget_for_every_parameter_kind() -> None:
    at = _ok(AppTest.from_function(_widgets_for_every_kind, default_timeout=TIMEOUT).run())
    slider = at.slider(key="t.threshold")
    assert (slider.value, slider.min, slider.max, slider.help) == (0.5, 0.0, 1.0, "How similar.")
    assert at.number_input(key="t.ratio").value == 1.5
    count = at.number_input(key="t.count")
    assert (count.value, count.min, count.max) == (3, 1, 9)
    assert at.toggle(key="t.flag").value is True
    assert json.loads(at.text_input(key="t.names").value) == ["a", "b"]
    assert at.selectbox(key="t.model").options == ["m1", "m2"]
    assert at.text_input(key="t.label").value == "x"
    at.toggle(key="t.flag").set_value(False).run()
    at.slider(key="t.threshold").set_value(0.8).run()
    assert at.session_state["t.flag"] is False and at.session_state["t.threshold"] == 0.8


def test_query_round_trip_for_every_strategy() -> None:
    samples = sidebar.sample_names()
    for name, spec in chunking.strategies().items():
        config = chunking.Config.create(name)
        state, problems = sidebar.query_to_state(
            sidebar.config_to_query(config, samples[0]), samples
        )
        assert problems == []
        values = {p.name: state[param_key(name, p.name)] for p in spec.params}
        assert chunking.Config.create(name, **values) == config
        assert state[sidebar.SAMPLE_KEY] == samples[0]


# ---------------------------------------------------------------- recommendation


def test_the_recommendation_can_be_applied() -> None:
    at = _ok(_app(sample="support_chat.txt"))
    text = read_path(ROOT / "sample_docs" / "support_chat.txt").text
    rec = recommend(text, "support_chat.txt")
    assert any(rec.kind in m.value for m in at.markdown)
    at.button(key="use_recommendation").click().run()
    _ok(at)
    assert at.selectbox(key=config_controls.STRATEGY_KEY).value == rec.strategy
    assert _count(at) == len(chunking.run(text, rec.config))
    assert any("Using the suggested" in s.value for s in at.success)


@pytest.mark.parametrize("sample", ["technical_guide.md", "inventory.py", "product_page.html"])
def test_the_suggestion_fits_the_embedding_models_window(sample: str) -> None:
    at = _ok(_app(sample=sample))
    assert any("reads 256 word pieces" in c.value for c in at.sidebar.caption)
    at.button(key="use_recommendation").click().run()
    _ok(at)
    count = _count(at)
    too_long = [w.value for w in at.warning if "too long for all-MiniLM" in w.value]
    found = re.search(r"\*\*(\d+) chunks? too long", too_long[0]) if too_long else None
    assert found is None or int(found.group(1)) * 10 <= count, too_long


# ------------------------------------------------------------------------ uploads


MINE = "My own notes about chunking. They are not a sample at all. " * 40


def _caption_with(at: AppTest, text: str) -> bool:
    return any(text in c.value for c in at.caption)


def test_the_tour_keeps_an_upload_hints_on_the_page_and_brings_the_upload_back() -> None:
    at = _ok(_upload("mine.txt", MINE.encode(), "text/plain"))
    mine = _count(at)
    at.switch_page("pages/tour_page.py").run()
    _ok(at.button(key="tour_1_0").click().run())
    assert [t.value for t in at.title] == ["Explore"]
    assert at.radio(key=sidebar.SOURCE_KEY).value == "Sample"
    hint = [i.value for i in at.main.info if "Try it" in i.value]
    assert hint and "red markers fall in the middle of words" in hint[0]
    at.switch_page("pages/explore_page.py")  # AppTest does not follow st.switch_page
    at.button(key="tour_hint_dismiss").click().run()
    assert not [i for i in at.main.info if "Try it" in i.value]
    _ok(at.button(key="back_to_my_document").click().run())
    assert at.radio(key=sidebar.SOURCE_KEY).value == "Upload"
    assert _caption_with(at, "mine.txt")
    assert _count(at) == mine
    assert not [b for b in at.button if b.key == "back_to_my_document"]


def test_an_upload_survives_a_page_change_the_browser_did_not_report() -> None:
    from streamlit.proto.WidgetStates_pb2 import WidgetStates

    at = _ok(_upload("mine.txt", MINE.encode(), "text/plain"))
    mine = _count(at)
    at.switch_page("pages/compare_page.py")._run(WidgetStates())
    at.switch_page("pages/explore_page.py").run()
    _ok(at)
    assert _caption_with(at, "mine.txt") and _count(at) == mine
    assert _caption_with(at, "uploaded earlier")
    at.radio(key=sidebar.SOURCE_KEY).set_value("Sample").run()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Upload").run()
    assert _caption_with(at, "mine.txt") and _count(at) == mine


def test_removing_the_upload_forgets_it() -> None:
    at = _ok(_upload("mine.txt", MINE.encode(), "text/plain"))
    at.file_uploader(key=sidebar.UPLOAD_KEY).set_value(None).run()
    _ok(at)
    assert not _caption_with(at, "mine.txt")
    assert any("Upload a file above" in i.value for i in at.info)


def test_the_slow_tour_stops_are_announced_before_they_start() -> None:
    at = _ok(_landing())
    slow = [b for b in at.button if b.key in ("tour_4_0", "tour_4_1")]
    assert len(slow) == 2 and all("25 s the first time" in b.label for b in slow)
    assert "25 s the first time" not in at.button(key="tour_1_0").label
    assert _caption_with(at, "about 25 s the first time")


def test_the_fifth_level_runs_contextual_retrieval_with_its_cost_shown_first() -> None:
    at = _ok(_landing())
    stop = at.button(key="tour_5_2")
    assert "Contextual retrieval" in stop.label and "cost shown first" in stop.label
    assert _caption_with(at, "offline SmolLM2-135M")
    assert not _caption_with(at, "does not implement")
    _ok(stop.click().run())
    at.switch_page("pages/llm_page.py").run()  # AppTest does not follow st.switch_page
    _ok(at)
    assert at.selectbox(key=sidebar.SAMPLE_KEY).value == "technical_guide.md"
    assert any(m.value.startswith("**Cost:**") for m in at.main.markdown)
    assert any("SmolLM2" in i.value for i in at.main.info)  # the slow note, as the hint


def test_uploaded_text_is_decoded_and_chunked() -> None:
    text = "Grüße aus Köln. Ça va très bien, merci. " * 40
    at = _ok(_upload("letter.txt", text.encode("cp1252"), "text/plain"))
    assert _count(at) == len(chunking.chunk(text))
    assert any("cp1252" in c.value for c in at.caption)


def test_an_unsure_encoding_is_shown_and_can_be_overridden() -> None:
    text = "Smørrebrød og rødgrød. " * 3
    at = _ok(_upload("danish.txt", text.encode("cp1252"), "text/plain"))
    assert any("cp1252 (confidence 50%)" in c.value for c in at.caption)
    assert any("cp1250 would also give plausible text" in w.value for w in at.warning)
    at.selectbox(key=sidebar.ENCODING_KEY).set_value("cp1250").run()
    _ok(at)
    assert any("cp1250 (confidence 100%)" in c.value for c in at.caption)
    assert not any("plausible" in w.value for w in at.warning)
    assert _count(at) == len(chunking.chunk(text.encode("cp1252").decode("cp1250")))


def test_a_named_encoding_that_does_not_fit_is_an_error_in_place() -> None:
    at = _upload("russian.txt", "Привет, мир. ".encode("cp1251") * 5, "text/plain")
    at.selectbox(key=sidebar.ENCODING_KEY).set_value("utf-8").run()
    assert not at.exception
    assert any("is not valid utf-8" in e.value for e in at.error)


def test_uploaded_pdf_keeps_page_numbers() -> None:
    at = _ok(_upload("report.pdf", _pdf("First page text here.", "Second page text here.")))
    at.number_input(key="recursive.size").set_value(25).run()
    _ok(at)
    table = _frame_with(show_explore_tab(at, "Chunks"), "page")
    assert list(table["page"]) == [1, 2]


def test_uploaded_docx_is_chunked() -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("A first paragraph in Word.")
    document.add_paragraph("A second paragraph in Word.")
    buffer = io.BytesIO()
    document.save(buffer)
    at = _ok(_upload("notes.docx", buffer.getvalue()))
    expected = "A first paragraph in Word.\n\nA second paragraph in Word."
    assert _count(at) == len(chunking.chunk(expected))
    assert any("docx" in c.value for c in at.caption)


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("empty.txt", b"", "is empty"),
        ("blob.txt", bytes(range(256)) * 8, "binary"),
        ("photo.xyz", b"hello", "unsupported extension"),
        ("scan.pdf", _pdf(""), "no text layer"),
    ],
)
def test_bad_uploads_show_what_to_do(name: str, data: bytes, expected: str) -> None:
    at = _ok(_upload(name, data))
    message = _errors(at)
    assert expected in message and name in message
    assert not at.metric
    assert any("Pick a sample" in w.value for w in at.warning)


def test_the_size_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sidebar.MAX_MB_ENV, "0.001")  # about 1 KB
    at = _ok(_upload("long.txt", b"words " * 1000, "text/plain"))
    message = _errors(at)
    assert "over the" in message and "limit" in message


def test_a_bad_size_limit_setting_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sidebar.MAX_MB_ENV, "lots")
    at = _ok(_upload("short.txt", b"Some words.", "text/plain"))
    assert any(sidebar.MAX_MB_ENV in w.value for w in at.warning)
    assert _count(at) == 1


def test_load_document_returns_a_message_for_bad_bytes() -> None:
    assert isinstance(sidebar.load_document(b"Hello there.", "a.md"), Document)
    assert "is empty" in sidebar.load_document(b"", "a.txt")
    assert "binary" in sidebar.load_document(b"\x00\x01\x02" * 50, "a.txt")
    assert "limit" in sidebar.load_document(b"x" * 100, "a.txt", max_bytes=10)
    assert "no text layer" in sidebar.load_document(_pdf(""), "a.pdf")
    assert sidebar.max_upload_bytes({}) == (50 * 1024 * 1024, None)
    assert sidebar.max_upload_bytes({sidebar.MAX_MB_ENV: "2"}) == (2 * 1024 * 1024, None)
    size, problem = sidebar.max_upload_bytes({sidebar.MAX_MB_ENV: "-3"})
    assert size == 50 * 1024 * 1024 and problem and "positive" in problem


def test_exports_round_trip() -> None:
    chunks = chunking.chunk(GUIDE, size=400)
    records = export.chunk_records(chunks, [None] * len(chunks))
    lines = export.to_jsonl(records).splitlines()
    assert [json.loads(line)["text"] for line in lines] == [c.text for c in chunks]
    frame = pd.read_csv(io.StringIO(export.to_csv(records)), keep_default_na=False)
    assert list(frame["start"]) == [c.start for c in chunks]
    assert list(frame["text"]) == [c.text for c in chunks]
    parquet = pd.read_parquet(io.BytesIO(export.to_parquet(records)))
    assert list(parquet["end"]) == [c.end for c in chunks]
    assert json.loads(parquet["metadata"][0]) == dict(chunks[0].metadata)
    paged = export.chunk_records(chunks[:2], [[3], [3, 4]])
    assert [r["metadata"]["pages"] for r in paged] == [[3], [3, 4]]


# ------------------------------------------------------------------ compare page


def _compare(**query: str) -> AppTest:
    at = _app(**query)
    at.switch_page("pages/compare_page.py").run()
    return _ok(at)


def _stats(at: AppTest) -> pd.DataFrame:
    """Compare's statistics table, one row per configuration letter."""
    return _frame_with(at, "Mean size").set_index("Config")


def _chart_specs(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_compare_histograms_and_statistics_use_each_configurations_unit() -> None:
    at = _compare()
    at.selectbox(key="cmp.B.strategy").set_value("recursive").run()
    at.selectbox(key="cmp.B.recursive.unit").set_value("tokens").run()
    at.number_input(key="cmp.B.recursive.size").set_value(200).run()
    _ok(at)
    panels = next(s for s in _chart_specs(at) if "Chunk sizes" in json.dumps(s["layout"]))
    titles = [
        axis["title"]["text"] for name, axis in panels["layout"].items() if name.startswith("xaxis")
    ]
    assert titles == ["size (chars)", "size (tokens)"]
    limits = sorted(s["x0"] for s in panels["layout"]["shapes"])
    sidebar_size = chunking.get_strategy("recursive").param("size").default  # A's, in chars
    assert limits == sorted([200, sidebar_size])
    stats = _stats(at)
    assert list(stats["Unit"]) == ["chars", "tokens"]
    b_chunks = chunking.chunk(GUIDE, "recursive", size=200, unit="tokens")
    assert stats.loc["B", "Largest"] == max(c.size for c in b_chunks)
    assert not [c for c in stats.columns if "_" in c or c.islower()], list(stats.columns)


def _default_b() -> str:
    return next(name for name in chunking.strategies() if name != "recursive")


def test_compare_page_shows_two_configurations() -> None:
    at = _compare()
    assert at.title[0].value == "Compare"
    assert len(at.get("plotly_chart")) == 3  # boundary strip, histograms, agreement
    stats = _stats(at)
    assert list(stats.index) == ["A", "B"]
    assert stats.loc["A", "Chunks"] == len(chunking.chunk(GUIDE))
    assert stats.loc["B", "Chunks"] == len(chunking.chunk(GUIDE, _default_b()))
    assert len(_boundary_html(at)) == 2


def test_compare_up_to_four_configurations_and_agreement() -> None:
    at = _compare()
    at.number_input(key="cmp.count").set_value(4).run()
    _ok(at)
    at.selectbox(key="cmp.B.strategy").set_value("fixed").run()
    at.number_input(key="cmp.B.fixed.size").set_value(300).run()
    at.slider(key="cmp.k").set_value(40).run()
    _ok(at)
    stats = _stats(at)
    assert list(stats.index) == ["A", "B", "C", "D"]
    b_chunks = chunking.chunk(GUIDE, "fixed", size=300)
    assert stats.loc["B", "Chunks"] == len(b_chunks)
    agreement_table = next(f.value for f in at.dataframe if list(f.value.columns) == list("ABCD"))
    expected = agreement(boundaries(chunking.chunk(GUIDE)), boundaries(b_chunks), 40)
    assert agreement_table.loc["A", "B"] == pytest.approx(expected)
    assert len(_boundary_html(at)) == 4


def test_compare_reports_an_invalid_configuration() -> None:
    at = _compare()
    at.selectbox(key="cmp.B.strategy").set_value("fixed").run()
    at.number_input(key="cmp.B.fixed.size").set_value(5).run()
    at.number_input(key="cmp.B.fixed.overlap").set_value(9).run()
    _ok(at)
    assert "overlap (9) must be smaller than size (5)" in _errors(at)
    assert any("Two valid configurations" in i.value for i in at.info)


def test_sidebar_settings_survive_a_page_switch() -> None:
    at = _ok(_app())
    at.number_input(key="recursive.size").set_value(333).run()
    at.switch_page("pages/compare_page.py").run()
    _ok(at)
    assert _stats(at).loc["A", "Chunks"] == len(chunking.chunk(GUIDE, size=333))
    at.slider(key="cmp.k").set_value(75).run()
    at.switch_page("pages/explore_page.py").run()
    _ok(at)
    assert _count(at) == len(chunking.chunk(GUIDE, size=333))
    at.switch_page("pages/compare_page.py").run()
    assert at.slider(key="cmp.k").value == 75


def test_sidebar_settings_survive_a_page_switch_the_browser_did_not_report() -> None:
    # A page link clicked while a run is still drawing reaches the server with an
    # incomplete list of widgets; on a page change Streamlit drops the state of every
    # widget missing from that list. Simulate the extreme case: no widget reported.
    from streamlit.proto.WidgetStates_pb2 import WidgetStates

    at = _ok(_app())
    at.selectbox(key="strategy").set_value("fixed").run()
    at.number_input(key="fixed.size").set_value(3000).run()
    at.number_input(key="fixed.overlap").set_value(1500).run()
    at.switch_page("pages/compare_page.py")._run(WidgetStates())
    _ok(at)
    assert not _errors(at)
    assert at.selectbox(key="strategy").value == "fixed"
    assert (_widget(at, "fixed.size").value, _widget(at, "fixed.overlap").value) == (3000, 1500)


@pytest.mark.parametrize(
    ("page", "title"),
    [
        ("pages/tour_page.py", "A guided tour of chunking"),
        ("pages/explore_page.py", "Explore"),
        ("pages/compare_page.py", "Compare"),
        ("pages/corpus_page.py", "Corpus"),
        ("pages/semantic_page.py", "Semantic breakpoints"),
        ("pages/map_page.py", "Embedding map"),
        ("pages/evaluate_page.py", "Evaluate"),
    ],
)
def test_every_page_of_the_navigation_renders(page: str, title: str) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page(page).run()
    assert not at.exception
    assert [t.value for t in at.title] == [title]


# ------------------------------------------------------------------ export as code


def test_explore_exports_the_configuration_as_runnable_code() -> None:
    at = _ok(show_explore_tab(_app(sample="long_essay.txt"), "Download and code"))
    at.selectbox(key="explore.code.target").set_value("langchain").run()
    _ok(at)
    assert any("exact" in s.value for s in at.success)
    code = next(c.value for c in at.code if "RecursiveCharacterTextSplitter" in c.value)
    namespace: dict = {}
    exec(compile(code, "snippet.py", "exec"), namespace)  # noqa: S102 - generated by the app
    text = read_path(ROOT / "sample_docs" / "long_essay.txt").text
    config = at.session_state[sidebar._CONFIG_STATE]  # the sidebar's configuration
    assert namespace["split"](text) == [c.text for c in chunking.run(text, config)]
    assert len(namespace["split"](text)) == _count(at)


def test_a_library_without_an_equivalent_says_why() -> None:
    at = _ok(show_explore_tab(_app(sample="long_essay.txt"), "Download and code"))
    at.selectbox(key=config_controls.STRATEGY_KEY).set_value("fixed").run()
    at.selectbox(key="explore.code.target").set_value("chonkie").run()
    _ok(at)
    assert any("No chonkie equivalent of 'fixed'" in i.value for i in at.info)
    assert not any("chonkie import" in c.value for c in at.code)


# ---------------------------------------------------------------- tokenizers as units


def test_sizes_can_be_counted_in_the_models_word_pieces() -> None:
    at = _ok(_app(sample="long_essay.txt"))
    at.selectbox(key="recursive.unit").set_value("model").run()
    at.number_input(key="recursive.size").set_value(200).run()
    _ok(at)
    text = read_path(ROOT / "sample_docs" / "long_essay.txt").text
    assert _count(at) == len(chunking.chunk(text, "recursive", size=200, unit="model"))
    table = _frame_with(show_explore_tab(at, "Chunks"), "model")
    assert {"tokens", "model"} <= set(table.columns)  # both sizes for every chunk
    assert (table["model"] <= 200).all()


def test_an_uploaded_tokenizer_becomes_the_unit(monkeypatch, tmp_path) -> None:
    from chunking.units import model_tokenizer_path

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    at = _ok(_app(sample="long_essay.txt"))
    uploader = at.file_uploader(key="recursive.unit.upload")
    data = model_tokenizer_path().read_bytes()
    uploader.set_value(("tokenizer.json", data, "application/json")).run()
    _ok(at)
    unit = at.selectbox(key="recursive.unit").value
    assert unit.startswith("tokenizer:") and Path(unit.split(":", 1)[1]).is_file()
    text = read_path(ROOT / "sample_docs" / "long_essay.txt").text
    assert _count(at) == len(chunking.chunk(text, "recursive", unit=unit))

    at.file_uploader(key="recursive.unit.upload").set_value(
        ("tokenizer.json", b'{"hello": 1}', "application/json")
    ).run()
    assert not at.exception
    assert any("is not a Hugging Face tokenizer.json" in e.value for e in at.error)
