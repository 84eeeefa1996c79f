"""What makes the first tokens call of a process cheap, held to the slow ways it replaced:
token byte lengths read from the ``.tiktoken`` file's layout (and kept on disk), a
token region's clean cuts found at its tokens' ends in UTF-8 bytes, byte offsets turned
into character offsets, separators searched in bytes."""

from __future__ import annotations

import binascii
import itertools
import re
import unicodedata

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking.engine.recursive import Occurrences
from chunking.tokens import cl100k
from chunking.units import (
    TokenRegion,
    TokenSizer,
    Utf8,
    clean_cuts,
    encoding_file,
    get_encoding,
    get_sizer,
    token_encoder,
)
from tests.conftest import chroma_corpora
from tests.test_units import AWKWARD

#: Characters of every kind the clean-cut rule and the UTF-8 view tell apart: those of
#: the region's own tests, and more two-, three- and four-byte characters.
PIECES = [*AWKWARD, "\r\n\r\n", "é", "ß", "Ελλη", "。", "👍🏽", "\u2029", "x\u0301\n"]
texts = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(st.characters(exclude_categories=("Cs",)))),
    max_size=40,
).map("".join)


def cl100k_count(text: str) -> int:
    return len(get_encoding().encode_ordinary(text))


def region_cuts(text: str) -> list[int]:
    sizer = get_sizer("tokens")
    assert isinstance(sizer, TokenSizer)
    return TokenRegion(sizer, text, 0, len(text)).cuts.tolist()


def reference_cuts(text: str) -> list[int]:
    """The clean cuts of the character-level rule (:func:`clean_cuts`)."""
    points = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    return clean_cuts(points).tolist()


# ---------------------------------------------------------------- token byte lengths


def decoded_lengths(data: bytes) -> np.ndarray:
    fields = data.split()
    ranks = np.array(fields[1::2]).astype(np.int64)
    lengths = np.zeros(int(ranks.max()) + 1, np.int64)
    lengths[ranks] = [len(binascii.a2b_base64(token)) for token in fields[0::2]]
    return lengths


def test_lengths_read_from_the_file_layout_are_those_of_the_decoded_tokens() -> None:
    path = encoding_file()
    assert path is not None
    data = path.read_bytes()
    lengths = cl100k.file_token_lengths(data)
    assert lengths is not None
    assert np.array_equal(lengths, decoded_lengths(data))
    assert set(np.unique(lengths).tolist()) >= {1, 2, 3, 4, 16}  # every padding case


@pytest.mark.parametrize(
    "data",
    [
        b"YQ== 0\r\nYWI= 1\r\n",  # other line ends
        b"YQ== 0\nYWI= 1",  # no final line end
        b"YQ==  0\n",  # two spaces
        b"YQ== x\n",  # no rank
        b"YQ 0\n",  # no base64 quad
    ],
)
def test_a_file_laid_out_otherwise_is_left_to_the_decoder(data: bytes) -> None:
    assert cl100k.file_token_lengths(data) is None


def test_ranks_out_of_order_and_with_gaps_are_placed_by_rank() -> None:
    data = b"YWJj 7\nYQ== 0\nYWI= 3\n"  # "abc", "a", "ab"
    assert cl100k.file_token_lengths(data).tolist() == [1, 0, 0, 2, 0, 0, 0, 3]


def test_lengths_are_kept_on_disk_and_a_damaged_copy_is_replaced(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    computed = []

    def compute() -> np.ndarray:
        computed.append(1)
        return np.array([0, 1, 4, 128], np.int64)

    first = cl100k.cached_lengths("abc", compute)
    kept = tmp_path / "chunk-explorer" / "tokens" / "lengths-abc.u16"
    assert kept.is_file() and [p.name for p in kept.parent.iterdir()] == [kept.name]
    again = cl100k.cached_lengths("abc", compute)
    assert first.tolist() == again.tolist() == [0, 1, 4, 128] and len(computed) == 1
    assert again.dtype == np.int64
    blob = bytearray(kept.read_bytes())
    blob[2] ^= 1  # one bit changed: the hash no longer matches
    kept.write_bytes(bytes(blob))
    assert cl100k.cached_lengths("abc", compute).tolist() == [0, 1, 4, 128]
    assert len(computed) == 2
    kept.write_bytes(kept.read_bytes()[:5])  # cut short
    assert cl100k.cached_lengths("abc", compute).tolist() == [0, 1, 4, 128]
    assert len(computed) == 3
    assert cl100k.cached_lengths("abc", compute).tolist() == [0, 1, 4, 128]
    assert len(computed) == 3  # replaced by a sound copy


def test_a_cache_that_cannot_be_written_only_costs_the_computation(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    lengths = cl100k.cached_lengths("abc", lambda: np.array([0, 2], np.int64))
    assert lengths.tolist() == [0, 2]


def test_the_encoder_gives_the_same_lengths_from_a_fresh_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    reference = decoded_lengths(encoding_file().read_bytes())  # type: ignore[union-attr]
    for _ in range(2):  # computed and stored, then read back
        encoder = cl100k.Encoder(encoding_file(), get_encoding)
        assert np.array_equal(encoder.token_lengths, reference)
    assert len(list((tmp_path / "chunk-explorer" / "tokens").iterdir())) == 1
    assert np.array_equal(token_encoder(backend="tiktoken").token_lengths, reference)


# ---------------------------------------------------------------- UTF-8 offsets


@given(texts, st.data())
def test_byte_offsets_of_characters_turn_back_into_character_offsets(
    text: str, data: st.DataObject
) -> None:
    utf8 = Utf8(text)
    positions = sorted(set(data.draw(st.lists(st.integers(0, len(text))))))
    at = np.array([len(text[:k].encode("utf-8")) for k in positions], np.int64)
    assert utf8.chars(at).tolist() == positions


def test_a_lone_surrogate_takes_the_three_bytes_of_the_character_it_is_encoded_as() -> None:
    text = "a\ud800b😀\udfffc"
    utf8 = Utf8(text)
    assert len(utf8.data) == len("a\ufffdb😀\ufffdc".encode())
    assert utf8.chars(np.array([0, 1, 4, 5, 9, 12, 13])).tolist() == [0, 1, 2, 3, 4, 5, 6]


def kind(char: str) -> int:
    """What the clean-cut rule calls a character: 3 a line break, 1 other whitespace,
    2 a letter or digit, 0 anything else."""
    if char in "\r\n":
        return 3
    return 1 if char.isspace() else 2 if unicodedata.category(char)[0] in "LN" else 0


@given(texts)
def test_every_byte_has_the_kind_of_its_character(text: str) -> None:
    expected = [kind(char) for char in text for _ in char.encode("utf-8")]
    assert Utf8(text).kinds().tolist() == expected


# ---------------------------------------------------------------- the region's cuts


@given(texts)
def test_the_region_finds_every_clean_cut_of_the_character_rule(text: str) -> None:
    # Cuts are only looked for where a token ends: none of the rule's may be missed.
    assert region_cuts(text) == reference_cuts(text)


def test_the_region_finds_every_clean_cut_in_real_text() -> None:
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in chroma_corpora())
    crlf = text[:200_000].replace("\n", "\r\n")  # Windows line ends too
    for sample in (text, crlf):
        assert region_cuts(sample) == reference_cuts(sample)


def test_every_cut_of_the_rule_splits_the_count_of_every_short_text() -> None:
    # Every text of up to four characters from those the rule tells apart (line
    # breaks, other whitespace, letters, digits, punctuation, apostrophes): a clean cut
    # splits the count of every span across it exactly.
    counted: dict[str, int] = {}

    def count(text: str) -> int:
        if text not in counted:
            counted[text] = cl100k_count(text)
        return counted[text]

    checked = 0
    for length in range(2, 5):
        for chars in itertools.product("a1.' \t\n\r\x85s", repeat=length):
            text = "".join(chars)
            for cut in reference_cuts(text)[1:-1]:
                for a in range(cut):
                    for b in range(cut + 1, length + 1):
                        assert count(text[a:b]) == count(text[a:cut]) + count(text[cut:b]), (
                            text,
                            cut,
                        )
                        checked += 1
    assert checked > 10_000


@given(st.lists(st.one_of(st.sampled_from(PIECES), st.just("\ud800"), st.just("\udfff"))))
def test_a_region_with_lone_surrogates_counts_as_tiktoken(parts: list[str]) -> None:
    text = "".join(parts)
    sizer = get_sizer("tokens")
    assert isinstance(sizer, TokenSizer)
    region = TokenRegion(sizer, text, 0, len(text))
    spans = [(a, b) for a in range(0, len(text) + 1, 3) for b in (a, len(text))]
    sizes = region.sizes([a for a, _ in spans], [b for _, b in spans])
    assert sizes == [cl100k_count(text[a:b]) for a, b in spans]


@given(texts, st.data())
def test_one_span_alone_counts_as_many_spans_do(text: str, data: st.DataObject) -> None:
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    a = data.draw(st.integers(lo, hi))
    b = data.draw(st.integers(a, hi))
    sizer = get_sizer("tokens")
    assert isinstance(sizer, TokenSizer)
    region = TokenRegion(sizer, text, lo, hi)
    assert region.sizes([a], [b]) == [region.size(a, b)] == [cl100k_count(text[a:b])]
    assert region.sizes([a, lo], [b, hi])[0] == cl100k_count(text[a:b])


# ---------------------------------------------------------------- separators in bytes


@given(
    text=st.lists(st.sampled_from(["a", "é", "東", "😀", " ", "\n", "。", "é。", "😀😀"])).map(
        "".join
    ),
    separator=st.sampled_from(["\n\n", "\n", " ", "。", "é", "😀", "😀😀", "é。", "a😀"]),
    lo=st.integers(0, 20),
)
def test_separators_of_any_script_are_found_where_they_occur(
    text: str, separator: str, lo: int
) -> None:
    lo = min(lo, len(text))
    region = Occurrences(text, lo, len(text))
    # every occurrence, overlapping ones too, then those str.split cuts at
    every = [m.start() for m in re.finditer(f"(?={re.escape(separator)})", text)]
    assert region.starts(separator).tolist() == [p for p in every if p >= lo]
    leftmost = [m.start() + lo for m in re.finditer(re.escape(separator), text[lo:])]
    assert region.within(separator, lo, len(text)).tolist() == leftmost
