"""Isolation of documents in the app's shared caches (issue 37, point 2).

Every cache of the app is process-wide (``pages/cached.py``'s ``bounded``), shared by
all sessions. These tests prove that no key confuses two documents that share a name,
or whose texts are one a prefix of the other: first by calling the cached functions
directly, interleaved, then with two AppTest sessions in one process (so, the same
module-level caches) uploading files of the same name. Every figure is checked against
the core (``chunking.run`` / ``chunking.chunk``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

import chunking
from chunking import Config
from chunking.documents.io import Document
from chunking.embedding.models import embed_chunks, get_embedder
from chunking.embedding.projection import array_key
from chunking.output.export import chunk_pages
from pages import cached, chunk_tables, map_page, sidebar
from pages.state import EXPLORE_TAB_KEY

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 120
NAME = "notes.txt"
#: Two documents of one name; the second starts with the whole first one.
FIRST = "\n\n".join(
    f"Section {i}. The first document speaks of rivers and bridges, paragraph {i}."
    for i in range(12)
)
SECOND = (
    FIRST
    + "\n\n"
    + "\n\n".join(
        f"Appendix {i}: the second document goes on about mountains and tunnels." for i in range(9)
    )
)
CONFIGS = (
    Config.from_dict({"strategy": "recursive", "params": {"size": 120, "unit": "chars"}}),
    Config.from_dict({"strategy": "fixed", "params": {"size": 50, "overlap": 10}}),
    Config.from_dict({"strategy": "sentence", "params": {"size": 40, "unit": "words"}}),
)


def _spans(chunks: Any) -> list[tuple[int, int, str]]:
    return [(c.start, c.end, c.text) for c in chunks]


def _sources(*texts: str, name: str = NAME) -> list[cached.Source]:
    return [cached.Source.from_text(t, name, "upload") for t in texts]


# ------------------------------------------------------------ direct cached calls


def test_same_name_and_prefix_texts_get_different_keys() -> None:
    a, b, c = _sources(FIRST, SECOND, FIRST[:-1])
    assert len({a.key, b.key, c.key}) == 3
    assert a.key == _sources(FIRST, name="other.md")[0].key  # content, never the name


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.strategy)
def test_chunks_counts_pages_and_tables_follow_each_documents_own_text(config: Config) -> None:
    a, b = _sources(FIRST, SECOND)
    for source in (a, b, a, b):  # interleaved: each call may hit what the other filled
        text = source.document.text
        expected = chunking.run(text, config)
        assert _spans(cached.chunks(source, config)) == _spans(expected)
        report = cached.analysis(source, config)
        assert report.count == len(expected)
        assert report.boundaries == [c.end for c in expected[:-1]]
        pages = cached.boundary_pages(source, config)
        assert pages[-1].end == len(text)
        table = chunk_tables.chunk_table_for(source, config)
        assert list(zip(table["start"], table["end"], strict=True)) == [
            (c.start, c.end) for c in expected
        ]
    assert len(cached.chunks(a, CONFIGS[0])) < len(cached.chunks(b, CONFIGS[0]))


def test_the_recommendation_is_the_one_of_each_documents_text() -> None:
    from chunking.analysis.recommend import recommend
    from chunking.analysis.report import model_max_tokens

    window = model_max_tokens()
    for source in _sources(FIRST, SECOND, FIRST):
        text, name = source.document.text, source.document.name
        assert cached.recommendation(source) == recommend(text, name, window=window)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    head=st.text(st.characters(codec="utf-8"), min_size=1, max_size=300),
    tail=st.text(st.characters(codec="utf-8"), min_size=1, max_size=300),
    size=st.integers(5, 80),
)
def test_a_prefix_never_gets_the_longer_texts_chunks(head: str, tail: str, size: int) -> None:
    config = Config.from_dict({"strategy": "recursive", "params": {"size": size, "unit": "chars"}})
    short, long = _sources(head, head + tail)
    assert short.key != long.key
    for source in (long, short, long):
        try:
            expected = chunking.run(source.document.text, config)
        except ValueError as exc:  # a blank text: the page shows the core's message
            with pytest.raises(ValueError, match=re.escape(str(exc))):
                cached.chunks(source, config)
            continue
        got = cached.chunks(source, config)
        assert _spans(got) == _spans(expected)
        assert cached.analysis(source, config).count == len(got)


def test_the_same_text_with_other_pages_has_its_own_pages_in_reports_and_downloads() -> None:
    """A PDF and a text file of one text (or two PDFs laid out differently) must not
    share reports: the report carries the pages every download writes."""
    text = "Page one has words here.\n\nPage two has other words."
    split = text.index("Page two")
    plain = Document(text=text, name="a.pdf", kind="text", encoding=None)
    paged = Document(
        text=text,
        name="a.pdf",
        kind="pdf",
        encoding=None,
        pages=((0, split - 2), (split, len(text))),
    )
    other = Document(
        text=text, name="a.pdf", kind="pdf", encoding=None, pages=((0, 5), (7, len(text)))
    )
    sources = [cached.Source.of(d, "upload") for d in (plain, paged, other)]
    assert len({s.key for s in sources}) == 3
    # the same document from two different files: their page images differ
    assert cached.Source.of(paged, "upload", "x").key != cached.Source.of(paged, "upload", "y").key
    config = Config.from_dict({"strategy": "fixed", "params": {"size": 10, "overlap": 0}})
    for source in (*sources, *sources):
        chunks = cached.chunks(source, config)
        assert cached.analysis(source, config).pages == chunk_pages(source.document, chunks)
    assert cached.analysis(sources[0], config).pages[0] is None
    assert cached.analysis(sources[1], config).pages[-1] == [2]


def test_chunk_embeddings_are_each_documents_own() -> None:
    embedder = get_embedder("minilm-static")
    config = CONFIGS[0]
    seen = []
    for source in _sources(FIRST, SECOND, FIRST):
        chunks = cached.chunks(source, config)
        mapped = map_page.Mapped("A", config, chunks, tuple(range(len(chunks))))
        got = map_page.embeddings_for(source, mapped, embedder).vectors
        own = embed_chunks(chunking.run(source.document.text, config), embedder).vectors
        assert got.shape == own.shape
        np.testing.assert_allclose(got, own, rtol=1e-5, atol=1e-6)
        seen.append(got)
    assert len(seen[0]) < len(seen[1])


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(2, 12), dims=st.integers(1, 6), cut=st.integers(1, 11))
def test_projection_keys_are_content_addresses_of_the_vectors(
    rows: int, dims: int, cut: int
) -> None:
    """The map's projections are keyed by :func:`array_key`: a prefix of the vectors, the
    same bytes in another shape or dtype, and one changed value all differ."""
    vectors = np.arange(rows * dims, dtype=np.float32).reshape(rows, dims)
    key = array_key(vectors)
    assert array_key(vectors.copy()) == key
    assert array_key(vectors[: min(cut, rows - 1)]) != key
    assert array_key(vectors.reshape(dims, rows)) != key or rows == dims
    assert array_key(vectors.astype(np.float64)) != key
    changed = vectors.copy()
    changed[-1, -1] += 1
    assert array_key(changed) != key


# ------------------------------------------------------------ two sessions, AppTest


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, Callable[[], Any]]]]:
    """Every deferred download a run hands to ``st.download_button``: (file name, what
    the browser's click runs), in the order the runs made them."""
    made: list[tuple[str, Callable[[], Any]]] = []
    original = MediaFileManager.add_deferred

    def record(self: MediaFileManager, data: Callable[[], Any], *args: Any, **kwargs: Any) -> str:
        name = kwargs.get("file_name") or (args[2] if len(args) > 2 else None)
        made.append((str(name), data))
        return original(self, data, *args, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    yield made


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _count(at: AppTest) -> int:
    for metric in at.metric:
        if metric.label == "Chunks":
            return int(metric.value.replace(",", ""))
    raise AssertionError(f"no Chunks metric; have {[m.label for m in at.metric]}")


def _session(text: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state[EXPLORE_TAB_KEY] = "Download and code"  # kept across the page changes
    at = at.run().switch_page("pages/explore_page.py").run()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Upload").run()
    at.file_uploader(key=sidebar.UPLOAD_KEY).set_value((NAME, text.encode(), "text/plain"))
    return _ok(at.run())


def _jsonl(downloads: list[tuple[str, Callable[[], Any]]]) -> list[dict[str, Any]]:
    """The chunks the last JSONL download button of a run would give."""
    name, make = [d for d in downloads if d[0].endswith(".jsonl")][-1]
    assert name == "notes-recursive.jsonl"
    data = make()
    data = data.decode() if isinstance(data, bytes) else data
    return [json.loads(line) for line in data.splitlines() if line.strip()]


@pytest.mark.xdist_group("isolation_apptest")
def test_two_sessions_uploading_one_name_each_see_their_own_document(
    downloads: list[tuple[str, Callable[[], Any]]],
) -> None:
    """Two AppTest sessions in one process share every module-level cache; each uploads
    ``notes.txt`` (one text a prefix of the other) and sees only its own chunks, count
    and download, also after Compare and back, and after the other session's runs."""
    first = _session(FIRST)
    first_download = _jsonl(downloads)
    second = _session(SECOND)
    second_download = _jsonl(downloads)
    expected = {id(first): chunking.chunk(FIRST), id(second): chunking.chunk(SECOND)}
    assert len(expected[id(first)]) != len(expected[id(second)])
    for at, rows in ((first, first_download), (second, second_download)):
        own = expected[id(at)]
        assert _count(at) == len(own)
        assert [(r["start"], r["end"], r["text"]) for r in rows] == _spans(own)
    for at in (first, second, first):  # page changes, in turn, on the shared caches
        own = expected[id(at)]
        _ok(at.switch_page("pages/compare_page.py").run())
        _ok(at.switch_page("pages/explore_page.py").run())
        assert _count(at) == len(own)
        rows = _jsonl(downloads)
        assert [(r["start"], r["end"], r["text"]) for r in rows] == _spans(own)
