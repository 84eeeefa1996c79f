"""The server restarted in the middle of a vector-database write (issue 37, point 7): the
page comes back saying the collection is incomplete, and writing again completes it with
one record per chunk (the write's marker, :mod:`chunking.sinks.journal`).

The process that writes is really ended (``os._exit`` between two slices, no clean-up),
in a subprocess; the database is a real LanceDB folder in ``tmp_path``, read back with
LanceDB's own client.
"""

from __future__ import annotations

import os
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
from chunking.embedding.models import get_embedder
from chunking.output.export import chunk_records
from chunking.output.places import DATA_DIR_ENV
from chunking.sinks import SinkError, collection_name, write_records
from chunking.sinks.journal import JOURNAL_DIR, Journal, marker_path, unfinished, unfinished_in
from chunking.sinks.lance import LanceSink
from pages.state import EXPLORE_TAB_KEY

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 180
CONFIG = Config.from_dict({"strategy": "fixed", "params": {"size": 40, "overlap": 0}})
COLLECTION = collection_name(CONFIG.label())
#: More records than one of LanceDB's slices, so that a write can stop between two.
TEXT = " ".join(f"Sentence {i} of the restart test is about item {i}." for i in range(5000))


def _records() -> tuple[list[dict[str, Any]], np.ndarray]:
    from chunking import run

    chunks = run(TEXT, CONFIG)
    records = [{**r, "doc_id": "doc-restart", "path": "restart.txt"} for r in chunk_records(chunks)]
    return records, get_embedder("hash").embed([c.embedding_text for c in chunks])


def _write(folder: Path, **kw: Any) -> int:
    records, vectors = _records()
    return write_records(f"lancedb:{folder}", records, vectors, config=CONFIG, model="hash", **kw)


def _rows(folder: Path, collection: str = COLLECTION) -> list[dict[str, Any]]:
    return lancedb.connect(str(folder)).open_table(collection).to_arrow().to_pylist()


def _killed_mid_write(folder: Path) -> subprocess.CompletedProcess[str]:
    """Write in another process that dies right after its first slice."""
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from pathlib import Path
        from test_vector_db_restart import _write
        def die(done, total, what):
            if done < total:
                os._exit(9)
        _write(Path({str(folder)!r}), progress=die)
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_a_write_killed_mid_way_is_reported_incomplete_and_a_rerun_completes_it(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "db"
    records, _ = _records()
    assert len(records) > LanceSink.batch_size  # at least two slices
    done = _killed_mid_write(folder)
    assert done.returncode == 9, done.stderr
    left = unfinished(folder, COLLECTION)
    assert left is not None and not left.running
    assert (left.total, left.done) == (len(records), LanceSink.batch_size)
    assert len(_rows(folder)) == left.done  # what the marker says is what is there
    message = left.message(f"lancedb:{folder}")
    assert "incomplete" in message
    assert f"({left.done:,} of {len(records):,} records confirmed written" in message
    assert "Write again" in message and "\n" not in message
    assert [u.collection for u in unfinished_in(folder)] == [COLLECTION]

    assert _write(folder) == len(records)
    rows = _rows(folder)
    assert len(rows) == len({r["id"] for r in rows}) == len(records)  # no duplicates
    assert sorted(r["index"] for r in rows) == [r["index"] for r in records]
    assert unfinished(folder, COLLECTION) is None and not (folder / JOURNAL_DIR).exists()


class Stopped(BaseException):
    """Stands for what ends a run from outside (Streamlit's StopException, Ctrl-C)."""


def test_a_running_write_says_so_and_one_stopped_in_this_process_is_incomplete(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "db"
    seen: list[Any] = []

    def look_then_stop(done: int, total: int, what: str) -> None:
        seen.append(unfinished(folder, COLLECTION))
        if done < total:
            raise Stopped

    with pytest.raises(Stopped):
        _write(folder, progress=look_then_stop)
    assert seen[0] is not None and seen[0].running and seen[0].done == LanceSink.batch_size
    assert "being written right now" in seen[0].message("here")
    after = unfinished(folder, COLLECTION)
    assert after is not None and not after.running and after.done == LanceSink.batch_size
    assert _write(folder) == len(_records()[0]) and unfinished(folder, COLLECTION) is None


def test_a_complete_write_leaves_no_marker_and_a_refused_one_none(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    assert _write(folder) == len(_records()[0])
    assert unfinished(folder, COLLECTION) is None and unfinished_in(folder) == []
    records, vectors = _records()
    other = Config.from_dict({"strategy": "fixed", "params": {"size": 41, "overlap": 0}})
    with pytest.raises(SinkError):  # another configuration into the same collection
        write_records(
            f"lancedb:{folder}", records, vectors, config=other, model="hash", collection=COLLECTION
        )
    assert unfinished_in(folder) == [] and len(_rows(folder)) == len(records)


def test_a_retry_that_writes_nothing_keeps_the_earlier_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write killed mid-way, then one that fails before its first record: the
    collection is still as incomplete as before, and says the same."""
    folder = tmp_path / "db"
    assert _killed_mid_write(folder).returncode == 9
    before = marker_path(folder, COLLECTION).read_text(encoding="utf-8")

    def broken(self: LanceSink, batch: Any, label: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(LanceSink, "upsert", broken)
    with pytest.raises(OSError, match="No space"):
        _write(folder)
    assert marker_path(folder, COLLECTION).read_text(encoding="utf-8") == before
    left = unfinished(folder, COLLECTION)
    assert left is not None and not left.running and left.done == LanceSink.batch_size


def test_a_marker_of_a_process_id_used_again_is_not_taken_for_a_running_write(
    tmp_path: Path,
) -> None:
    """After a restart the server may get the old process id (in a container, always):
    the marker's process start time tells the dead writer from the new server."""
    folder = tmp_path / "db"
    folder.mkdir()
    journal = Journal.begin(folder, COLLECTION, 10)
    journal.advance(4)
    assert unfinished(folder, COLLECTION).running  # type: ignore[union-attr]
    path = marker_path(folder, COLLECTION)
    # The same pid, as the restarted server would have it, but this Journal is gone:
    journal.stop(wrote=True)
    left = unfinished(folder, COLLECTION)
    assert left is not None and not left.running and (left.done, left.total) == (4, 10)
    # The id of another live process (started seconds after this one): not running.
    other = subprocess.Popen(["sleep", "60"])
    try:
        text = path.read_text(encoding="utf-8").replace(
            f'"pid": {os.getpid()}', f'"pid": {other.pid}'
        )
        path.write_text(text, encoding="utf-8")
        assert not unfinished(folder, COLLECTION).running  # type: ignore[union-attr]
    finally:
        other.kill()
        other.wait()


def test_a_folder_holding_only_a_marker_is_still_a_new_database(tmp_path: Path) -> None:
    """A write killed before it created its collection leaves the marker alone: the
    folder is still accepted for writing, and the rerun completes it."""
    folder = tmp_path / "db"
    folder.mkdir()
    Journal.begin(folder, COLLECTION, 3).stop(wrote=True)
    assert [p.name for p in folder.iterdir()] == [JOURNAL_DIR]
    assert _write(folder) == len(_records()[0])
    assert unfinished_in(folder) == []


# --------------------------------------------------------------------------- the page


PAGE_SCRIPT = """
import os, sys
from streamlit.testing.v1 import AppTest
from chunking.sinks.lance import LanceSink

LanceSink.batch_size = 8  # the guide's chunks in several slices
original = LanceSink.upsert
calls = [0]
def upsert_then_die(self, batch, label):
    original(self, batch, label)
    calls[0] += 1
    if calls[0] == 2:
        os._exit(9)  # the server goes down between two slices
LanceSink.upsert = upsert_then_die
at = AppTest.from_file({app!r}, default_timeout=180)
at.session_state["explore.sink_model"] = "hash"
at.session_state["explore.tab"] = "Download and code"  # the box's tab
at.session_state["explore.vector_db"] = True  # the box's expander open
at = at.run().switch_page("pages/explore_page.py").run()
assert not at.exception, [e.value for e in at.exception]
at.button(key="explore.sink_write").click().run()
sys.exit(3)  # not reached: the write dies
"""


@pytest.mark.xdist_group("vector_db_restart_apptest")
def test_the_page_comes_back_saying_incomplete_and_a_rerun_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {**os.environ, DATA_DIR_ENV: str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "c")}
    died = subprocess.run(
        [sys.executable, "-c", PAGE_SCRIPT.format(app=APP)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert died.returncode == 9, died.stderr[-2000:]
    folder = tmp_path / "vectors"  # the box's default folder
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)  # a new session: the server is back
    at.session_state["explore.sink_model"] = "hash"
    at.session_state[EXPLORE_TAB_KEY] = "Download and code"  # the box's tab
    at.session_state["explore.vector_db"] = True  # the box's expander open
    at = at.run().switch_page("pages/explore_page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    config = at.session_state["_ce_config"]
    collection = collection_name(config.label())
    partial = _rows(folder, collection)
    assert len(partial) == 16  # two slices of 8 reached the database
    warnings = [str(w.value) for w in at.warning if "incomplete" in str(w.value)]
    assert len(warnings) == 1, [str(w.value) for w in at.warning]
    assert f"Collection {collection}" in warnings[0] and "incomplete" in warnings[0]
    # the marker heard the first slice; the second reached the database as it died
    chunks = int(at.button(key="explore.sink_write").label.split()[1].replace(",", ""))
    assert f"(8 of {chunks:,} records confirmed written" in warnings[0]
    assert "Write again" in warnings[0] and "\n" not in warnings[0]

    at = at.button(key="explore.sink_write").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    rows = _rows(folder, collection)
    assert len(rows) == len({r["id"] for r in rows}) == chunks > len(partial)  # no duplicate
    shown = [str(s.value) for s in at.success if "Wrote" in str(s.value)]
    assert len(shown) == 1 and f"holds {len(rows):,} records" in shown[0]
    assert not [w for w in at.warning if "incomplete" in str(w.value)]
    assert unfinished_in(folder) == []
