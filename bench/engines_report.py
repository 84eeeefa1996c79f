"""How often other libraries' chunks are not what they say: flags per library engine.

Runs every library strategy (``chunking.libraries``) with its library's defaults on the
sample documents, on the chroma-eval corpora and on the repetitive and multi-script
texts of the Unicode matrix (``chunking.libraries.text_classes``, all but the 1 MB
line), and prints for each: documents, chunks, the share of chunks with each kind of
flag (a wrong or missing offset, altered text, text not found, text left out between
chunks, over the size limit, a placement whose search was capped) and the time taken
(library and alignment together). A strategy that cannot run here says why. Chunks are
placed in the library's order (``chunking.libraries.align``), so "text left out" is only
text that no consistent placement covers.

    .venv/bin/python bench/engines_report.py [--size N] [--overlap N] [--model hash]

``--size``/``--overlap`` replace every engine's size limit and overlap (in its own
unit); semantic engines embed with ``--model`` (``hash``, the default, is fast and
cuts elsewhere than a real model; the alignment findings do not depend on it).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

import chunking
from chunking.libraries import LIBRARIES
from chunking.libraries.align import flag_kind
from chunking.libraries.text_classes import ONE_MB_LINE, TEXT_CLASSES

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_docs"
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"

#: Columns: the kinds of flag, shortened to fit a line.
KINDS = {
    "library offset wrong": "wrong",
    "library offset missing": "missing",
    "text altered": "altered",
    "text not found": "notfound",
    "text left out": "leftout",
    "over limit": "over",
    "placement capped": "capped",
}


def documents() -> dict[str, list[tuple[str, str]]]:
    samples = sorted(p for p in SAMPLES.iterdir() if p.is_file() and p.name != "README.md")
    corpora = sorted(CORPORA.glob("*.md"))
    return {
        "samples": [(p.name, p.read_text(encoding="utf-8")) for p in samples],
        "chroma": [(p.name, p.read_text(encoding="utf-8")) for p in corpora],
        "repetitive": [(row.name, row.text) for row in TEXT_CLASSES if row.name != ONE_MB_LINE],
    }


def params_for(name: str, args: argparse.Namespace) -> dict[str, Any]:
    spec = chunking.get_strategy(name)
    params: dict[str, Any] = {}
    if "model" in spec.param_names:
        params["model"] = args.model
    if args.size is not None and spec.limit_param:
        params[spec.limit_param] = args.size
    if args.overlap is not None:
        for overlap in ("chunk_overlap", "overlap"):
            if overlap in spec.param_names:
                params[overlap] = args.overlap
    return params


def kind_of(flag: str) -> str | None:
    kind = flag_kind(flag)
    return next((k for k in KINDS if kind.startswith(k)), None)


def run(name: str, params: dict[str, Any], docs: list[tuple[str, str]]) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    chunks = 0
    failures: list[str] = []
    seconds = 0.0
    config = chunking.Config.create(name, **params)
    for doc, text in docs:
        t0 = time.perf_counter()
        try:
            result = chunking.run(text, config)
        except ValueError as exc:
            failures.append(f"{doc}: {exc}")
            continue
        finally:
            seconds += time.perf_counter() - t0
        chunks += len(result)
        for c in result:
            kinds = {kind_of(f) for f in c.flags} - {None}
            counts.update(k for k in kinds if k)
            counts["flagged"] += bool(kinds)
    return {"chunks": chunks, "counts": counts, "failures": failures, "seconds": seconds}


def share(count: int, total: int) -> str:
    return f"{100 * count / total:5.1f}%" if total else "    -"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=None, help="every engine's size limit")
    parser.add_argument("--overlap", type=int, default=None, help="every engine's overlap")
    parser.add_argument("--model", default="hash", help="embedding model of semantic engines")
    args = parser.parse_args()
    groups = documents()
    header = (
        f"{'strategy':26} {'docs':>7} {'chunks':>6} {'flagged':>7} "
        + " ".join(f"{short:>8}" for short in KINDS.values())
        + f" {'seconds':>8}"
    )
    for group, docs in groups.items():
        size = sum(len(text) for _, text in docs)
        print(f"\n== {group}: {len(docs)} documents, {size / 1e6:.2f} M characters ==")
        print(header)
        for spec in LIBRARIES:
            result = run(spec.name, params_for(spec.name, args), docs)
            n, counts = result["chunks"], result["counts"]
            ran = len(docs) - len(result["failures"])
            cells = " ".join(f"{share(counts[k], n):>8}" for k in KINDS)
            print(
                f"{spec.name:26} {ran:>3}/{len(docs):<3} {n:>6} "
                f"{share(counts['flagged'], n):>7} {cells} {result['seconds']:8.2f}"
            )
            for failure in result["failures"][:1]:
                more = len(result["failures"]) - 1
                print(f"    not run: {failure}" + (f" (and {more} more)" if more else ""))


if __name__ == "__main__":
    main()
