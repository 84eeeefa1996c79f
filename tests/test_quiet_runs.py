"""The command line without a terminal (a log, CI, a pipe): ``evaluate`` says what it is
doing, one line per stage on stderr; loading a model prints no "LOAD REPORT" or weight
bar; and the app, ``evaluate`` and ``run --embed`` share one embedding cache on disk, so
that a text embedded by one is never embedded again by another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import chunking
from chunking import Config
from chunking.cli.options import terminal_progress
from chunking.embedding.base import HashEmbedder
from chunking.embedding.cache import clear_cache
from chunking.embedding.models import get_embedder
from chunking.evaluation.questions import Question, Reference
from chunking.evaluation.sweep import sweep
from tests.conftest import CHROMA

EXE = str(Path(sys.executable).with_name("chunk-explorer"))


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}


def test_evaluate_without_a_terminal_prints_a_line_per_stage(tmp_path: Path) -> None:
    argv = [EXE, "evaluate", "--dataset", str(CHROMA), "--corpus-id", "state_of_the_union"]
    argv += ["--model", "none", "--retriever", "bm25", "--size", "200", "400"]
    argv += ["--unit", "tokens", "--format", "json"]
    done = subprocess.run(argv, capture_output=True, text=True, env=_env(tmp_path), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    assert "\r" not in done.stderr  # no redrawn bar in a log
    for config in ("1/2: recursive · 200 tokens", "2/2: recursive · 400 tokens"):
        assert any(config in line and "Chunking" in line for line in lines), lines
        assert any(config in line and "Retrieving" in line for line in lines), lines
    assert lines[-1].endswith("evaluate: done")
    assert len(lines) < 20  # a line per stage, not per step
    assert json.loads(done.stdout)["results"]

    quiet = subprocess.run([*argv, "-q"], capture_output=True, text=True, env=_env(tmp_path))
    assert quiet.returncode == 0 and quiet.stderr == ""


class _Log:
    """A stream that is not a terminal."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def test_a_stage_is_one_line_whatever_its_counts() -> None:
    log = _Log()
    show = terminal_progress("run", log, enabled=True)  # type: ignore[arg-type]
    assert show is not None
    for done in range(0, 50, 5):
        show(done, 100, f"embedding {done}/50 texts")
    show(60, 100, "writing part 1")
    show(100, 100, "writing part 2")
    assert log.text.splitlines() == [
        "[  0%] run: embedding 0/50 texts",
        "[ 60%] run: writing part 1",
        "[100%] run: done",
    ]
    assert terminal_progress("run", log) is None  # not asked for: nothing on a log


def test_loading_the_bundled_model_prints_no_load_report(tmp_path: Path) -> None:
    code = (
        "from chunking.embedding.models import get_embedder\n"
        "print(get_embedder('all-MiniLM-L6-v2').embed(['quiet, please']).shape)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "(1, 384)"
    for noise in ("LOAD REPORT", "UNEXPECTED", "Loading weights"):
        assert noise not in done.stderr, done.stderr[-2000:]


def test_the_app_and_evaluate_share_the_disk_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the app embeds (Explore's chunks, through the disk cache) is read back by
    the evaluation ``evaluate`` runs, in another process (the memory cache forgotten)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    text = (CHROMA / "corpora" / "state_of_the_union.md").read_text(encoding="utf-8")[:6000]
    config = Config.create("recursive", size=200, unit="tokens")
    chunks = chunking.run(text, config)
    embedder = get_embedder("all-MiniLM-L6-v2")
    clear_cache()
    first = embedder.embed([c.text for c in chunks], disk_cache=True)  # as the app does
    clear_cache()  # a new process: nothing in memory
    where = text.index("the")
    question = Question(
        0, "What was said?", "sotu", (Reference(where, where + 40, text[where : where + 40]),)
    )
    encoded = embedder.encoded
    result = sweep({"sotu": text}, [question], [config], embedder)  # as evaluate does
    assert result.texts_embedded == 1  # the question only
    assert embedder.encoded - encoded == 1
    clear_cache()
    again = embedder.embed([c.text for c in chunks])  # run --embed's default
    np.testing.assert_array_equal(again, first)
    assert embedder.encoded - encoded == 1


def test_the_fake_model_keeps_its_vectors_in_memory_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    HashEmbedder(dimension=16).embed(["a text for nobody's disk"])
    assert not (tmp_path / "cache").exists()
