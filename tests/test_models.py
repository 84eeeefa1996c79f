"""The named embedding models: names resolved everywhere, clear errors, the ``models``
command, atomic builds and the bounded disk cache of vectors.

The derived models' quality against the torch reference is measured in
``tests/test_models_quality.py`` (slow: it builds them).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

import chunking.embedding.cache as emb_cache
import chunking.embedding.registry as registry
from chunking import chunk
from chunking.cli import main
from chunking.embedding.derived import build_once, fingerprint
from chunking.embedding.models import (
    DEFAULT_MODEL,
    EmbeddingError,
    ModelWindow,
    canonical_model_name,
    get_embedder,
    model_window,
)
from chunking.units import SPECIAL_TOKENS, model_tokenizer_path

ROOT = Path(__file__).resolve().parent.parent


# --- names ---------------------------------------------------------------------------


def test_the_registry_lists_the_three_models_default_first() -> None:
    assert registry.model_names() == [
        "minilm",
        "minilm-onnx-int8",
        "minilm-static",
        "use-multilingual",
        "multilingual-e5-small",
    ]
    static = registry.named_model("minilm-static")
    assert static is not None and static.note == "fast preview, lower quality"


@pytest.mark.parametrize(
    ("given", "key"),
    [
        ("minilm", DEFAULT_MODEL),
        ("MiniLM", DEFAULT_MODEL),
        ("all-MiniLM-L6-v2", DEFAULT_MODEL),
        ("", DEFAULT_MODEL),
        (None, DEFAULT_MODEL),
        (" minilm-onnx-int8 ", "minilm-onnx-int8"),
        ("minilm-static", "minilm-static"),
        ("hash", "hash"),
    ],
)
def test_every_name_of_a_model_resolves_to_one_cache_key(given: str | None, key: str) -> None:
    assert canonical_model_name(given) == key


# --- windows -------------------------------------------------------------------------


@pytest.mark.parametrize("named", registry.named_models(), ids=lambda m: m.name)
def test_a_named_models_window_is_the_registrys_whatever_stands_in(named) -> None:
    stand_in = get_embedder("hash")  # a quick preview drawn in place of the chosen model
    expected = ModelWindow("model", named.max_tokens - SPECIAL_TOKENS)
    for name in (named.name, named.key, *named.aliases):
        assert model_window(name, stand_in) == expected


def test_the_bundled_models_window_is_what_the_loaded_model_reads() -> None:
    minilm = get_embedder()
    assert (
        model_window(None, minilm)
        == ModelWindow("model", minilm.token_limit)
        == (ModelWindow("model", 254))
    )


def test_a_local_models_window_is_counted_in_its_own_tokenizer(tmp_path: Path) -> None:
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(model_tokenizer_path().read_bytes())
    loaded = get_embedder("hash")  # what the folder's model would report as its limit
    window = model_window(str(folder), loaded)
    assert window == ModelWindow(f"tokenizer:{folder / 'tokenizer.json'}", loaded.token_limit)
    pieces = chunk("word " * 2000, "recursive", size=window.limit, unit=window.unit)
    assert max(c.size for c in pieces) <= window.limit  # a unit the chunkers count in


def test_any_other_models_window_is_its_own_limit_in_the_bundled_word_pieces() -> None:
    fake = get_embedder("hash")
    assert model_window("hash", fake) == ModelWindow("model", fake.token_limit)


def test_minilm_is_the_bundled_model_loaded_once() -> None:
    assert get_embedder("minilm") is get_embedder() is get_embedder("all-MiniLM-L6-v2")
    assert get_embedder("minilm").name == DEFAULT_MODEL


def test_an_unknown_name_is_one_line_naming_the_models() -> None:
    with pytest.raises(EmbeddingError) as caught:
        get_embedder(f"no-such-model-{uuid.uuid4().hex[:6]}")
    message = str(caught.value)
    assert "\n" not in message
    assert "minilm-onnx-int8" in message and "minilm-static" in message


def test_a_folder_that_is_not_a_model_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(EmbeddingError) as caught:
        get_embedder(str(tmp_path))
    assert "\n" not in str(caught.value)
    assert "is a folder but not a model" in str(caught.value)


def test_a_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def without_onnxruntime(name: str, *args: object) -> object:
        return None if name == "onnxruntime" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_onnxruntime)
    onnx = registry.named_model("minilm-onnx-int8")
    assert onnx is not None
    status = onnx.availability()
    assert not status.available
    assert "onnxruntime" in status.note and "chunk-explorer[models]" in status.note
    with pytest.raises(EmbeddingError, match=r"pip install 'chunk-explorer\[models\]'"):
        onnx.load()


# --- the models command ----------------------------------------------------------------


def test_models_json_lists_name_backend_and_availability(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["models", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in records] == registry.model_names()
    for record in records:
        assert {"name", "backend", "available", "dimension", "max_tokens", "note"} <= set(record)
        assert isinstance(record["available"], bool)
    assert records[0]["backend"] == "torch" and records[0]["available"] is True
    assert records[2]["dimension"] == 256


def test_models_text_shows_every_model_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for name in registry.model_names():
        assert name in out
    assert "available" in out.splitlines()[0]


def test_a_model_that_is_not_built_is_available_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    status = registry.named_model("minilm-static").availability()  # type: ignore[union-attr]
    assert status.available
    assert status.note.startswith("not built yet: built on first use")


def test_the_cli_refuses_an_unknown_model_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc.txt"
    doc.write_text("One sentence here. Another one there. And a third one to cut.")
    code = main(["split", str(doc), "--strategy", "semantic", "--param", "model=nope-xyz"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("chunk-explorer: error:") and err.count("\n") == 1
    assert "minilm-static" in err


# --- building derived models ------------------------------------------------------------


def test_a_source_models_fingerprint_follows_its_files(tmp_path: Path) -> None:
    """The digest is kept between calls (every rerun asks), yet a changed source
    folder gives a new one, so its derived models are built again."""
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 10)
    first = fingerprint(tmp_path)
    assert fingerprint(tmp_path) == first
    (tmp_path / "tokenizer.json").write_text("{}")
    os.utime(tmp_path, ns=(1, 1))  # the folder changed, whatever the clock's resolution
    second = fingerprint(tmp_path)
    assert second != first
    (tmp_path / "tokenizer.json").unlink()
    os.utime(tmp_path, ns=(2, 2))
    assert fingerprint(tmp_path) == first  # the same files, the same digest


def test_a_failed_build_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "models" / "m"

    def fail(folder: Path) -> None:
        (folder / "half.onnx").write_bytes(b"\0" * 10)
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        build_once(target, fail)
    assert not target.exists()
    assert list((tmp_path / "models").iterdir()) == []


def test_a_build_runs_once_and_lands_whole(tmp_path: Path) -> None:
    target = tmp_path / "m"
    calls = []

    def make(folder: Path) -> None:
        calls.append(folder)
        (folder / "model.onnx").write_text("weights")

    assert build_once(target, make) == target
    assert build_once(target, make) == target
    assert len(calls) == 1
    assert (target / "model.onnx").read_text() == "weights"


def test_a_build_that_lost_the_race_uses_the_winner(tmp_path: Path) -> None:
    target = tmp_path / "m"

    def make(folder: Path) -> None:
        (folder / "mine").write_text("loser")
        target.mkdir()  # another process finished first
        (target / "theirs").write_text("winner")

    build_once(target, make)
    assert [p.name for p in target.iterdir()] == ["theirs"]
    assert [p.name for p in tmp_path.iterdir()] == ["m"]


# --- the disk cache ---------------------------------------------------------------------


def _fill(folder: Path, count: int) -> list[Path]:
    paths = []
    for i in range(count):
        key = emb_cache.text_key(f"text {i}")
        emb_cache.disk_put(folder, "m", key, np.full(64, i, dtype=np.float32))
        path = next(folder.glob(f"*/*/{key}.npy"))
        os.utime(path, (1_000_000 + i, 1_000_000 + i))  # written in this order
        paths.append(path)
    return paths


def test_prune_deletes_the_least_recently_used_first(tmp_path: Path) -> None:
    paths = _fill(tmp_path, 10)
    size = paths[0].stat().st_size
    emb_cache.disk_get(tmp_path, "m", emb_cache.text_key("text 0"), 64)  # used now: kept
    left = emb_cache.prune(tmp_path, limit=4 * size)
    assert left <= 4 * size
    kept = {p for p in paths if p.exists()}
    assert kept == {paths[0], paths[7], paths[8], paths[9]}


def test_the_disk_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(emb_cache.DISK_LIMIT_ENV, "5")
    assert emb_cache.disk_limit() == 5 * 2**20
    monkeypatch.setenv(emb_cache.DISK_LIMIT_ENV, "lots")
    assert emb_cache.disk_limit() == emb_cache.DEFAULT_DISK_LIMIT_MB * 2**20


def test_writing_past_the_limit_evicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(emb_cache.DISK_LIMIT_ENV, "1")
    embedder = get_embedder("hash")
    texts = [f"evict {uuid.uuid4().hex} {i}" for i in range(4000)]  # ~4000 * 384 B > 1 MB
    embedder.embed(texts, disk_cache=True, cache_dir=tmp_path)
    held = sum(p.stat().st_size for p in tmp_path.glob("*/*/*.npy"))
    assert 0 < held <= 2**20 + 2**20 // 10  # pruned at least every tenth of the limit


RESTART = """
import sys
from pathlib import Path
from chunking.embedding.models import get_embedder
emb = get_embedder("hash")
emb.embed([f"restart text {i}" for i in range(50)], disk_cache=True, cache_dir=Path(sys.argv[1]))
print(emb.encoded)
"""


def test_a_restart_does_not_embed_again(tmp_path: Path) -> None:
    def run() -> int:
        out = subprocess.run(
            [sys.executable, "-c", RESTART, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            timeout=120,
        )
        return int(out.stdout.strip())

    assert run() == 50
    assert run() == 0  # a new process: every vector read from the disk cache


def test_prune_skips_files_that_vanish(tmp_path: Path) -> None:
    paths = _fill(tmp_path, 3)
    paths[0].unlink()
    assert emb_cache.prune(tmp_path, limit=0) == 0
    assert not any(p.exists() for p in paths)


def test_the_distillation_reports_its_progress() -> None:
    from model2vec.distill import inference

    from chunking.embedding.static import _progress_of_distill

    original = inference.tqdm
    heard: list[tuple[float, str]] = []
    with _progress_of_distill(lambda fraction, step: heard.append((fraction, step))):
        bar = inference.tqdm(total=10, desc="Encoding tokens")
        bar.update(5)
        bar.close()
    assert heard == [(0.475, "word pieces through the model: 5 of 10")]
    assert inference.tqdm is original


def test_a_derived_model_shows_its_note_next_to_its_name() -> None:
    embedder = get_embedder("hash")
    assert embedder.label == embedder.name  # no note
    static = registry.named_model("minilm-static")
    assert static is not None and static.key == "minilm-static"
    assert get_embedder("minilm").label == DEFAULT_MODEL
