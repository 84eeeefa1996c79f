"""The bundled embedding model's word pieces, fast and exact: ``tokie`` where installed,
else Hugging Face ``tokenizers``.

tokie (Rust) reads the model's own ``tokenizer.json`` and counts its WordPiece tokens
(normalisation, pre-tokenising and the greedy longest match included) as ``tokenizers``
does: ``tests/test_token_backend.py`` compares the ids on the samples, the chroma-eval
corpora and generated text in many scripts. It counts 25-50x faster than
``tokenizers`` here (``bench/bench_tokenizers.py``), one text at a time or in batches.

Not for every character, though: tokie's Unicode tables are not those of
``tokenizers`` (about 820,000 code points, nearly all unassigned, and some 760 assigned
ones such as U+007F and recent additions, come out differently). So each character is
checked once, the first time a text holds it: both tokenizers split it in the contexts
of :data:`CONTEXT`, and a text holding any character they split differently is counted
by ``tokenizers`` (:attr:`WordPieces.unlike` lists those characters). Word pieces are
found word by word from characters normalised one at a time, so texts of characters
split alike are split alike.

Only the bundled model's file is counted this way (the one verified); a user's own
``tokenizer.json`` is read by ``tokenizers``. A tokie release other than
:data:`VERIFIED` is compared with ``tokenizers`` on :data:`PROBE` when loaded, and on
any difference ``tokenizers`` counts instead, with a warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from . import installed_release

#: The tokie release whose word pieces were compared with ``tokenizers``' here.
VERIFIED = "0.1.4"
#: The backends, fastest first.
BACKENDS = ("tokie", "tokenizers")
#: Text that an unverified tokie must split as ``tokenizers`` does: accents to strip,
#: Chinese characters to split apart, punctuation, unknown words, digits and emoji.
PROBE = (
    "Héllo, WORLD! It's 2024: naïve café; Ünïcödé x\u0301 ﬁnance 12,345.67 "
    "Ελληνικά русский עברית العربية हिन्दी ไทย 한국어 中文分词测试 日本語のテキスト 😀👍🏽 "
    "[CLS] [SEP] [MASK] supercalifragilisticexpialidocious \u200b\u00a0end"
)

#: Where each new character is put to compare the two tokenizers: inside a word, alone,
#: doubled, after punctuation and before a line break.
CONTEXT = "a{0}b {0} {0}{0}x.{0}\n"


class WordPieces:
    """Word pieces (no special tokens added) of the ``tokenizer.json`` at ``path``.

    ``fallback()`` gives the ``tokenizers`` tokenizer of the same file, used when tokie
    is not installed (or ``backend="tokenizers"``) and for text tokie refuses.
    :attr:`backend` says which one counts, :attr:`fell_back` why it is not the one
    asked for.
    """

    def __init__(self, path: Path, fallback: Callable[[], Any], backend: str | None = None) -> None:
        if backend not in (None, *BACKENDS):
            raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        self._fallback = fallback
        self._fast: Any = None
        self.fell_back: str | None = None
        #: Characters checked: split alike by both tokenizers, or not (``unlike``).
        self.alike: set[str] = set()
        self.unlike: set[str] = set()
        self._ascii_unlike: list[str] | None = None
        release = installed_release("tokie", VERIFIED) if backend != "tokenizers" else None
        if release is None:
            if backend == "tokie":
                raise ValueError("the tokie backend is not installed: pip install tokie")
            self.backend = "tokenizers"
            return
        from tokie import Tokenizer

        try:
            self._fast = Tokenizer.from_json(str(path))
        except Exception as exc:  # tokie raises its own error for a file it cannot read
            self.fell_back = f"tokie cannot read {path} ({exc}); tokenizers counts instead"
            warnings.warn(self.fell_back, RuntimeWarning, stacklevel=2)
            self.backend = "tokenizers"
            return
        self.backend = "tokie"
        self._fast.no_truncation()
        self._fast.no_padding()
        if release != VERIFIED and self._ids(PROBE) != self._slow_ids(PROBE):
            self.fell_back = (
                f"tokie {release} splits word pieces unlike tokenizers; tokenizers counts "
                f"instead (tokie {VERIFIED} is the release verified)"
            )
            warnings.warn(self.fell_back, RuntimeWarning, stacklevel=2)
            self._fast, self.backend = None, "tokenizers"

    @cached_property
    def tokenizers(self) -> Any:
        """The ``tokenizers`` tokenizer of the same file (loaded on first use)."""
        return self._fallback()

    def _slow_ids(self, text: str) -> list[int]:
        return list(self.tokenizers.encode(text, add_special_tokens=False).ids)

    def _ids(self, text: str) -> list[int]:
        return list(self._fast.encode(text, add_special_tokens=False).ids)

    def _check(self, chars: set[str]) -> None:
        """Compare the two tokenizers on each of ``chars`` (in :data:`CONTEXT`)."""
        order = sorted(chars)
        probes = [CONTEXT.format(c) for c in order]
        slow = self.tokenizers.encode_batch(probes, add_special_tokens=False)
        fast = self._fast.encode_batch(probes, add_special_tokens=False)
        for char, a, b in zip(order, slow, fast, strict=True):
            (self.alike if list(a.ids) == list(b.ids) else self.unlike).add(char)

    def _fast_enough(self, text: str) -> bool:
        """Whether tokie splits every character of ``text`` as ``tokenizers`` does."""
        if self._fast is None:
            return False
        if text.isascii():
            if self._ascii_unlike is None:
                self._check({chr(c) for c in range(128)} - self.alike - self.unlike)
                self._ascii_unlike = sorted(c for c in self.unlike if c.isascii())
            return not any(c in text for c in self._ascii_unlike)
        chars = set(text)
        if chars <= self.alike:
            return True
        unknown = chars - self.alike - self.unlike
        if unknown:
            self._check(unknown)
        return not chars & self.unlike

    def ids(self, text: str) -> list[int]:
        """The word-piece ids of ``text``."""
        if self._fast_enough(text):
            try:
                return self._ids(text)
            except UnicodeEncodeError:  # a lone surrogate: refused as tokenizers refuses it
                pass
        return self._slow_ids(text)

    def count(self, text: str) -> int:
        """How many word pieces ``text`` has."""
        if self._fast_enough(text):
            try:
                return int(self._fast.count_tokens(text))
            except UnicodeEncodeError:
                pass
        return len(self._slow_ids(text))

    def counts(self, texts: Sequence[str]) -> list[int]:
        """How many word pieces each of ``texts`` has, in batches."""
        texts = list(texts)
        fast = [k for k, t in enumerate(texts) if self._fast_enough(t)]
        found: list[int] = [0] * len(texts)
        if fast:
            try:
                counted = self._fast.count_tokens_batch([texts[k] for k in fast])
                for k, n in zip(fast, counted, strict=True):
                    found[k] = int(n)
            except UnicodeEncodeError:
                fast = []
        slow = sorted(set(range(len(texts))) - set(fast))
        if slow:
            encoded = self.tokenizers.encode_batch(
                [texts[k] for k in slow], add_special_tokens=False
            )
            for k, e in zip(slow, encoded, strict=True):
                found[k] = len(e.ids)
        return found
