"""Faults while the app embeds or writes to a vector database (issue 37, point 7).

A write stopped part-way (the session ended, a rerun, the server process killed) leaves
at most some of the records; a rerun completes the collection with one record per chunk,
because every record's id is its document's content hash and the chunk's index and the
sinks upsert. An embedding that fails part-way writes nothing and says so in one line.
Real LanceDB databases in ``tmp_path``, read back with LanceDB's own client.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from chunking import Config
from chunking.embedding.base import EmbeddingError, HashEmbedder
from chunking.embedding.models import get_embedder
from chunking.output.export import chunk_records
from chunking.output.places import DATA_DIR_ENV
from chunking.sinks import collection_name, write_records
from chunking.sinks.lance import LanceSink
from pages.state import EXPLORE_TAB_KEY

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 180
CONFIG = Config.from_dict({"strategy": "fixed", "params": {"size": 40, "overlap": 0}})
#: LanceDB is sent this many records at once: a write stops between two such slices.
SLICE = LanceSink.batch_size
#: More records than two slices.
TEXT = " ".join(f"Sentence number {i} of the fault test talks about item {i}." for i in range(6000))
#: What the page writes (fewer records: the page test is about the page).
PAGE_TEXT = " ".join(f"Sentence {i} of the page test talks about item {i}." for i in range(3000))


class Stopped(BaseException):
    """Stands for what ends a run from outside (Streamlit's StopException, Ctrl-C)."""


def _records(text: str = TEXT) -> tuple[list[dict[str, Any]], np.ndarray]:
    from chunking import run

    chunks = run(text, CONFIG)
    records = [{**row, "doc_id": "doc-fault", "path": "fault.txt"} for row in chunk_records(chunks)]
    vectors = get_embedder("hash").embed([c.embedding_text for c in chunks])
    return records, vectors


def _rows(folder: Path) -> list[dict[str, Any]]:
    table = lancedb.connect(str(folder)).open_table(collection_name(CONFIG.label()))
    return table.to_arrow().to_pylist()


def _write(folder: Path, records: list[dict[str, Any]], vectors: np.ndarray, **kw: Any) -> int:
    return write_records(f"lancedb:{folder}", records, vectors, config=CONFIG, model="hash", **kw)


def _complete(folder: Path, records: list[dict[str, Any]]) -> None:
    rows = _rows(folder)
    assert len(rows) == len(records)
    assert len({r["id"] for r in rows}) == len(records)  # no duplicates
    assert sorted((r["index"], r["text"]) for r in rows) == sorted(
        (r["index"], r["text"]) for r in records
    )


def test_a_write_stopped_mid_way_is_completed_by_a_rerun_without_duplicates(
    tmp_path: Path,
) -> None:
    records, vectors = _records()
    assert len(records) > 2 * SLICE
    folder = tmp_path / "db"

    def stop_after_first_slice(done: int, total: int, what: str) -> None:
        if done < total:
            raise Stopped

    with pytest.raises(Stopped):
        _write(folder, records, vectors, progress=stop_after_first_slice)
    assert 0 < len(_rows(folder)) < len(records)  # half-written: what the rerun repairs
    assert _write(folder, records, vectors) == len(records)
    _complete(folder, records)
    assert _write(folder, records, vectors) == len(records)  # and again: still no duplicate
    _complete(folder, records)


def test_a_server_killed_mid_write_leaves_a_database_a_rerun_completes(tmp_path: Path) -> None:
    """The process dies between two slices (no clean-up at all, as when the server is
    restarted): its lock goes with it, and the next write completes the collection."""
    folder = tmp_path / "db"
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from test_faults import _records, _write
        from pathlib import Path
        records, vectors = _records()
        def die(done, total, what):
            if done < total:
                os._exit(9)
        _write(Path({str(folder)!r}), records, vectors, progress=die)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 9, done.stderr
    records, vectors = _records()
    assert 0 < len(_rows(folder)) < len(records)
    assert _write(folder, records, vectors) == len(records)
    _complete(folder, records)


def test_an_embedder_failing_mid_batch_writes_nothing_and_a_rerun_writes_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Embedding comes before writing: an embedder that fails after its first batch
    leaves no database at all; the rerun embeds what is missing and writes every record."""
    from chunking import run

    text = TEXT.replace("fault test", "embedder test")
    chunks = run(text, CONFIG)
    records = [{**r, "doc_id": "doc-emb", "path": "e.txt"} for r in chunk_records(chunks)]
    folder = tmp_path / "db"
    original = HashEmbedder._encode
    calls = [0]

    def failing(self: HashEmbedder, texts: list[str]) -> np.ndarray:
        calls[0] += 1
        if calls[0] == 2:
            raise EmbeddingError("the model stopped half-way")
        return original(self, texts)

    monkeypatch.setattr(HashEmbedder, "_encode", failing)
    embedder = get_embedder("hash")
    texts = [c.embedding_text for c in chunks]
    with pytest.raises(EmbeddingError):
        vectors = embedder.embed(texts, batch_size=64, disk_cache=False)
        _write(folder, records, vectors)
    assert not folder.exists()
    vectors = embedder.embed(texts, batch_size=64, disk_cache=False)
    assert calls[0] > 2  # the rerun embedded the rest (the first batch came from memory)
    assert _write(folder, records, vectors) == len(records)
    _complete(folder, records)


# ------------------------------------------------------------------- the page


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app's data folder, and an empty disk embedding cache (the page embeds into it:
    vectors kept from an earlier run would spare the embedder that fails)."""
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def _explore_with_hash_model() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["explore.sink_model"] = "hash"
    at.session_state[EXPLORE_TAB_KEY] = "Download and code"  # the box's tab
    at.session_state["explore.vector_db"] = True  # the box's expander open
    at = at.run().switch_page("pages/explore_page.py").run()
    at.radio(key="source").set_value("Paste").run()
    at.text_area(key="pasted").set_value(PAGE_TEXT).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.xdist_group("faults_apptest")
def test_the_page_says_in_one_line_that_embedding_failed_and_a_rerun_writes_all(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = HashEmbedder._encode
    calls = [0]

    def failing(self: HashEmbedder, texts: list[str]) -> np.ndarray:
        calls[0] += 1
        if calls[0] == 2:
            raise EmbeddingError("the model stopped half-way")
        return original(self, texts)

    monkeypatch.setattr(HashEmbedder, "_encode", failing)
    at = _explore_with_hash_model()
    at.text_input(key="explore.sink_path").input("vectors").run()
    at = at.button(key="explore.sink_write").click().run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [str(e.value) for e in at.error]
    assert len(errors) == 1 and "stopped half-way" in errors[0], errors
    assert "\n" not in errors[0]
    assert not (data_dir / "vectors").exists()  # nothing half-written
    at = at.button(key="explore.sink_write").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    config = at.session_state["_ce_config"]
    rows = (
        lancedb.connect(str(data_dir / "vectors"))
        .open_table(collection_name(config.label()))
        .to_arrow()
        .to_pylist()
    )
    shown = [str(s.value) for s in at.success if "Wrote" in str(s.value)]
    assert len(shown) == 1 and f"holds {len(rows):,} records" in shown[0]
    assert len({r["id"] for r in rows}) == len(rows) > 1
