"""AppTest tests of "Write to a vector database" on Explore and on the Corpus page: the
records written (read back with LanceDB's own client), the count shown, a second write
that replaces instead of adding, refusals as one ``st.error``, and the search box.

The embedding model is the fast fake ``hash`` (these tests are about the writing); the
sinks' own tests (tests/test_sinks.py) cover every kind with real models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lancedb
import pytest
from streamlit.testing.v1 import AppTest

import chunking
from chunking.documents.corpus import doc_id
from chunking.documents.io import read_bytes
from chunking.output.places import DATA_DIR_ENV
from chunking.sinks import SinkWriter, Written, collection_name, write_records
from pages.state import EXPLORE_TAB_KEY

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 180
GUIDE_PATH = ROOT / "sample_docs" / "technical_guide.md"
FILES = {
    "notes.txt": "A short note about chunking.\n\nIt has two paragraphs, each one sentence.\n",
    "overlap.md": "# Overlap\n\n" + "Overlap repeats the end of a chunk. " * 60 + "\n",
}


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _open(page: str, prefix: str) -> AppTest:
    """The app on ``page`` with the hash model in its vector database box (set before
    the box is drawn: AppTest cannot type a new option into a select box)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state[f"{prefix}.sink_model"] = "hash"
    if prefix == "explore":  # there, in its tab, the box is drawn while it is open
        at.session_state[EXPLORE_TAB_KEY] = "Download and code"
        at.session_state["explore.vector_db"] = True
    return _ok(at.run().switch_page(f"pages/{page}").run())


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app writes only below its data folder: here, the test's own folder."""
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))


def _write(at: AppTest, prefix: str, folder: Path) -> AppTest:
    """Type ``folder``'s name (it is directly in the data folder) and press Write."""
    _ok(at.text_input(key=f"{prefix}.sink_path").input(folder.name).run())
    return _ok(at.button(key=f"{prefix}.sink_write").click().run())


def _errors(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.error]


def _written(at: AppTest) -> str:
    shown = [str(s.value) for s in at.success if "Wrote" in str(s.value)]
    assert len(shown) == 1, (shown, _errors(at))
    return shown[0]


def _rows(folder: Path, collection: str) -> list[dict[str, Any]]:
    """Every record, read with LanceDB's own client."""
    return lancedb.connect(str(folder)).open_table(collection).to_arrow().to_pylist()


def _collection(at: AppTest) -> str:
    config = at.session_state["_ce_config"]  # the sidebar's configuration
    assert isinstance(config, chunking.Config)
    return collection_name(config.label())


def test_explore_writes_the_document_once_and_searches_it(tmp_path: Path) -> None:
    folder = tmp_path / "vectors"
    at = _write(_open("explore_page.py", "explore"), "explore", folder)
    text = read_bytes(GUIDE_PATH.read_bytes(), GUIDE_PATH.name).text
    chunks = chunking.chunk(text)
    n = len(chunks)
    assert not _errors(at)
    assert f"Wrote {n:,} chunks" in _written(at) and f"holds {n:,} records" in _written(at)
    collection = _collection(at)
    rows = _rows(folder, collection)
    assert len(rows) == n
    # the ids are those of chunk-explorer run: the file's content hash and the index
    assert {r["doc_id"] for r in rows} == {doc_id(GUIDE_PATH.read_bytes())}
    assert {r["path"] for r in rows} == {GUIDE_PATH.name}
    by_index = {r["index"]: r for r in rows}
    for chunk in chunks:
        row = by_index[chunk.index]
        assert (row["start"], row["end"]) == (chunk.start, chunk.end)
        assert row["text"] == text[row["start"] : row["end"]]

    at = _ok(at.button(key="explore.sink_write").click().run())  # again: replaced, not added
    assert f"holds {n:,} records" in _written(at)
    assert len(_rows(folder, collection)) == n

    command = at.code[-1].value
    assert command.startswith(f"chunk-explorer search lancedb:{folder} ")
    assert f"--collection {collection}" in command and "-k 5" in command
    at = _ok(at.text_input(key="explore.sink_question").input(chunks[3].text).run())
    at = _ok(at.button(key="explore.sink_search").click().run())
    assert not _errors(at)
    hits = next(f.value for f in at.dataframe if "score" in f.value.columns)
    assert len(hits) == 5 and int(hits["chunk"].iloc[0]) == chunks[3].index
    assert hits["path"].tolist() == [GUIDE_PATH.name] * 5


def test_explores_box_is_drawn_only_while_its_expander_is_open() -> None:
    """Closed (the default), the box costs the rerun nothing: none of its widgets are
    drawn. Opened, it is drawn. (That it stays open across pages needs a real click:
    ``tests/e2e/test_vector_box_browser.py``.)"""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state[EXPLORE_TAB_KEY] = "Download and code"
    at = _ok(at.run().switch_page("pages/explore_page.py").run())
    assert [e.label for e in at.expander].count("Write to a vector database") == 1
    assert not [t for t in at.text_input if t.key == "explore.sink_path"]
    at.session_state["explore.vector_db"] = True  # as a click on the expander does
    at = _ok(at.run())
    assert [t for t in at.text_input if t.key == "explore.sink_path"]


def test_the_corpus_page_writes_every_document(tmp_path: Path) -> None:
    at = _open("corpus_page.py", "corpus")
    files = [(name, text.encode(), "text/plain") for name, text in FILES.items()]
    at = _ok(at.file_uploader(key="corpus.upload").set_value(files).run())
    folder = tmp_path / "db"
    at = _write(at, "corpus", folder)
    per_file = {name: len(chunking.chunk(text)) for name, text in FILES.items()}
    n = sum(per_file.values())
    assert n > len(FILES)  # the long file is cut into several chunks
    assert f"Wrote {n:,} chunks" in _written(at) and f"holds {n:,} records" in _written(at)
    rows = _rows(folder, _collection(at))
    assert len(rows) == n
    by_path = {p: [r for r in rows if r["path"] == p] for p in FILES}
    assert {p: len(found) for p, found in by_path.items()} == per_file
    for path, found in by_path.items():
        assert {r["doc_id"] for r in found} == {doc_id(FILES[path].encode())}
        assert all(r["text"] == FILES[path][r["start"] : r["end"]] for r in found)

    at = _ok(at.button(key="corpus.sink_write").click().run())
    assert f"holds {n:,} records" in _written(at)
    assert len(_rows(folder, _collection(at))) == n


@pytest.mark.parametrize("what", ["file", "other database", "locked"])
def test_a_path_that_cannot_be_written_is_one_error(tmp_path: Path, what: str) -> None:
    folder = tmp_path / "target"
    held = None
    if what == "file":
        folder.write_text("not a database")
        expected = "is a file"
    elif what == "other database":
        record = {"index": 0, "start": 0, "end": 4, "size": 4, "text": "text", "metadata": {}}
        record |= {"doc_id": "0" * 16, "path": "a.txt"}
        config = chunking.Config.create("fixed")
        write_records(f"chroma:{folder}", [record], [[1.0] * 8], config=config, model="hash")
        expected = "it holds a Chroma database"
    else:
        held = SinkWriter(f"lancedb:{folder}", "held", Written("hash", 64, {}))
        expected = "is being written by another process"
    before = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else None
    try:
        at = _write(_open("explore_page.py", "explore"), "explore", folder)
    finally:
        if held is not None:
            held.abandon()
    errors = _errors(at)
    assert len(errors) == 1 and expected in errors[0] and "\n" not in errors[0], errors
    assert not [s for s in at.success if "Wrote" in str(s.value)]
    if before is not None and what != "locked":
        assert sorted(p.name for p in folder.iterdir()) == before  # nothing written
