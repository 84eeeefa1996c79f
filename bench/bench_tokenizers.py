"""Counting tokens on the chroma-eval corpora: cl100k_base by tiktoken, by gigatoken (the
tokens unit's fast backend, chunking.tokens.cl100k) and by bpe-openai when installed; the
embedding model's word pieces by Hugging Face ``tokenizers`` and by tokie (the model
unit's fast backend, chunking.tokens.wordpiece). One text at a time and in batches.

    .venv/bin/python bench/bench_tokenizers.py [--repeat 3] [--size 1000]

The corpora are cut into recursive chunks of ``--size`` characters first (what the
report counts: every chunk, in every unit), and measured whole too. gigatoken keeps the
pieces it has encoded, so it is timed twice: on text it has never seen (a new encoder
for every run, its loading not timed) and on text it has. Prints MB/s (of UTF-8 text),
the best of ``--repeat`` runs (CPU time: steadier on a shared machine), the ratios to
tiktoken one text at a time, and that every backend counts what its reference counts.
A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import chunking
from chunking import units
from chunking.tokens.cl100k import Encoder

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"


def best_of(repeat: int, work: Callable[[], object], setup: Callable[[], object] | None = None):
    """The least CPU seconds of ``repeat`` runs of ``work`` (``setup`` untimed before each)."""
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=1000)
    args = parser.parse_args()
    docs = [p.read_text(encoding="utf-8") for p in sorted(CORPORA.glob("*.md"))]
    whole = "\n\n".join(docs)
    texts: list[str] = [c.text for d in docs for c in chunking.chunk(d, size=args.size)]
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    print(f"{len(texts):,} chunks of the chroma corpora, {megabytes:.2f} MB; whole, ", end="")
    print(f"{len(whole.encode()) / 1e6:.2f} MB")

    tiktoken = units.get_encoding()
    fresh: list[Encoder] = []

    def new_encoder() -> None:  # a gigatoken encoder that has seen nothing
        fresh[:] = [Encoder(units.encoding_file(), units.get_encoding, backend="gigatoken")]

    seen = Encoder(units.encoding_file(), units.get_encoding, backend="gigatoken")
    seen.encode(whole)
    sizer = units.get_sizer("tokens")
    assert isinstance(sizer, units.TokenSizer)
    print(f"tokens unit backend: {sizer.backend}; model unit backend: ", end="")
    hf = units.load_hf_tokenizer(units.model_tokenizer_path())
    pieces = units.model_wordpieces()
    print(pieces.backend)

    def hf_counts(batch: list[str]) -> list[int]:
        return [len(e.ids) for e in hf.encode_batch(batch, add_special_tokens=False)]

    rows: dict[str, tuple[Callable[[], object], Callable[[], object] | None, float]] = {
        "cl100k tiktoken, one text at a time": (
            lambda: [len(tiktoken.encode_ordinary(t)) for t in texts],
            None,
            megabytes,
        ),
        "cl100k tiktoken, batch (threads)": (
            lambda: tiktoken.encode_ordinary_batch(texts),
            None,
            megabytes,
        ),
        "cl100k gigatoken, one at a time, never seen": (
            lambda: [fresh[0].count(t) for t in texts],
            new_encoder,
            megabytes,
        ),
        "cl100k gigatoken, one at a time, seen": (
            lambda: [seen.count(t) for t in texts],
            None,
            megabytes,
        ),
        "tokens unit, its memo cleared": (
            lambda: [sizer.size(t) for t in texts],
            sizer.clear_cache,
            megabytes,
        ),
        "cl100k tiktoken, whole text": (
            lambda: tiktoken.encode_to_numpy(whole, disallowed_special=()),
            None,
            len(whole.encode()) / 1e6,
        ),
        "cl100k gigatoken, whole text, never seen": (
            lambda: fresh[0].encode(whole),
            new_encoder,
            len(whole.encode()) / 1e6,
        ),
        "cl100k gigatoken, whole text, seen": (
            lambda: seen.encode(whole),
            None,
            len(whole.encode()) / 1e6,
        ),
        "model word pieces, tokenizers batch": (lambda: hf_counts(texts), None, megabytes),
        "model word pieces, tokie batch": (lambda: pieces.counts(texts), None, megabytes),
        "model word pieces, tokie one at a time": (
            lambda: [pieces.count(t) for t in texts],
            None,
            megabytes,
        ),
    }
    try:
        import bpe_openai  # a candidate, measured when installed

        other = bpe_openai.get_encoding("cl100k_base")
        rows["cl100k bpe-openai, one text at a time"] = (
            lambda: [len(other.encode_ordinary(t)) for t in texts],
            None,
            megabytes,
        )
    except ImportError:
        print("bpe-openai: not installed, not measured")

    speeds = {}
    for name, (work, setup, mb) in rows.items():
        speeds[name] = mb / best_of(args.repeat, work, setup)
        print(f"{name:<46} {speeds[name]:8.2f} MB/s")
    base = speeds["cl100k tiktoken, one text at a time"]
    print("\nratio to cl100k tiktoken one text at a time (target for the tokens unit: >= 4x):")
    for name, speed in speeds.items():
        print(f"  {name:<46} {speed / base:6.2f}x")
    hf_base = speeds["model word pieces, tokenizers batch"]
    print("ratio to the model's word pieces by tokenizers, batch:")
    for name in [n for n in speeds if n.startswith("model")]:
        print(f"  {name:<46} {speeds[name] / hf_base:6.2f}x")

    reference = [len(tiktoken.encode_ordinary(t)) for t in texts]
    wrong = sum(a != b for a, b in zip(reference, [seen.count(t) for t in texts], strict=True))
    print(f"\n{sum(reference):,} cl100k tokens; chunks counted otherwise by gigatoken: {wrong}")
    reference = hf_counts(texts)
    wrong = sum(a != b for a, b in zip(reference, pieces.counts(texts), strict=True))
    print(f"{sum(reference):,} word pieces; chunks counted otherwise by tokie: {wrong}")
    unlike = ", ".join(f"U+{ord(c):04X}" for c in sorted(pieces.unlike)) or "none"
    print(f"characters tokie splits otherwise (counted by tokenizers): {unlike}")


if __name__ == "__main__":
    main()
