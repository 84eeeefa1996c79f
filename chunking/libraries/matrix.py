"""The Unicode and repetition matrix: what each library engine does to which text.

Rows are classes of text that break chunkers (:mod:`.text_classes`); :func:`measure`
runs one engine on one text and reports the matrix's columns (:data:`COLUMNS`):

- ``offsets exact or flagged``: how many chunks the library placed or wrote other than
  its own offsets and text say (every chunk is still the exact source slice; these
  are flagged, see :mod:`.align`);
- ``text left out (true amount)``: non-whitespace characters that no chunk covers,
  counted on the chunks themselves (placed in order, so only what no consistent
  placement covers);
- ``over-limit chunks``: chunks larger than the engine's own limit, measured in its
  unit;
- ``U+FFFD in library output``: chunks whose library text holds more U+FFFD than the
  source slice (a character cut between tokens and decoded in halves);
- ``byte-vs-character offset confusion``: chunks whose wrong reported offset is the
  UTF-8 byte offset (or the UTF-16 code-unit offset) of where the text really is;
- ``time``: seconds for the library and the alignment together (after a first run on a
  short text, so that loading the library and its models is not counted).

The export snippets declared exact (:data:`SNIPPET_CONFIGS`, every target) are run on
every row too (:func:`snippet_matrix`), as a user would run them.

``bench/unicode_matrix.py`` writes the table published as ``docs/unicode_matrix.md``;
``tests/test_unicode_matrix.py`` checks every cell's promises. Export snippets
declared exact name the rows they are not exact on by these rows' names
(:mod:`chunking.output.snippets`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..config import Config, get_strategy
from .align import BROKEN, flag_kind
from .text_classes import TEXT_CLASSES, TextClass

#: A short text each engine cuts once before it is timed.
WARM_UP: Final = "A first sentence to load the library. A second one, to be sure.\n\nThe end."

COLUMNS: Final = (
    "offsets exact or flagged",
    "text left out (true amount)",
    "over-limit chunks",
    "U+FFFD in library output",
    "byte-vs-character offset confusion",
    "time",
)


# --- measuring one engine on one text ----------------------------------------------------

#: Flags that say a chunk is not where, or not what, the library said.
_PLACEMENT_KINDS = (
    "library offset wrong",
    "library offset missing",
    "text altered",
    "text not found",
)


@dataclass
class Cell:
    """One engine on one text: the matrix's columns, and what they are made of."""

    chunks: int = 0
    #: Chunks per placement flag kind (offset wrong or missing, text altered or not found).
    flagged: Counter[str] = field(default_factory=Counter)
    flagged_chunks: int = 0
    left_out: int = 0
    #: Non-whitespace characters inside the ranges the chunks flag as left out.
    left_out_flagged: int = 0
    over_limit: int = 0
    replacement: int = 0
    #: Chunks whose reported offset is a UTF-8 byte (or UTF-16 unit) offset.
    byte_offsets: int = 0
    seconds: float = 0.0
    #: Why the engine did not run here (a one-line message), else ``None``.
    error: str | None = None

    def row(self) -> dict[str, str]:
        """The cell as the matrix's columns, in words."""
        if self.error is not None:
            return {c: "not run" if c == COLUMNS[0] else "-" for c in COLUMNS}
        if self.flagged_chunks:
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.flagged.items()))
            offsets = f"{self.flagged_chunks} of {self.chunks} flagged ({kinds})"
        else:
            offsets = f"exact ({self.chunks} chunks)"
        return {
            COLUMNS[0]: offsets,
            COLUMNS[1]: f"{self.left_out:,}" if self.left_out else "0",
            COLUMNS[2]: str(self.over_limit),
            COLUMNS[3]: str(self.replacement),
            COLUMNS[4]: str(self.byte_offsets),
            COLUMNS[5]: f"{self.seconds:.2f} s",
        }


def engine_params(name: str) -> dict[str, Any]:
    """The matrix's configuration of an engine: its defaults, with a size limit small
    enough for several chunks per text (128 tokens or 512 of another unit, an eighth of
    it overlapping) and the fast fake embedder for the semantic ones (the offsets do not
    depend on the model)."""
    spec = get_strategy(name)
    params: dict[str, Any] = {}
    if "model" in spec.param_names:
        params["model"] = "hash"
    if spec.limit_param:
        unit = spec.param("unit").default if "unit" in spec.param_names else "chars"
        limit = 128 if unit == "tokens" else 512
        params[spec.limit_param] = limit
        for overlap in ("chunk_overlap", "overlap"):
            if overlap in spec.param_names and spec.param(overlap).default:
                params[overlap] = limit // 8
    if name == "llamaindex.hierarchical":
        params["chunk_sizes"] = "512,128"
        params["chunk_overlap"] = 16
    return params


def measure(name: str, text: str, params: dict[str, Any] | None = None) -> Cell:
    """Run engine ``name`` (with ``params``, by default :func:`engine_params`) on
    ``text`` and fill the matrix's columns."""
    from ..core import run

    config = Config.create(name, **(engine_params(name) if params is None else params))
    started = time.perf_counter()
    try:
        chunks = run(text, config)
    except ValueError as exc:
        return Cell(error=str(exc), seconds=time.perf_counter() - started)
    return summarise(text, chunks, time.perf_counter() - started)


def summarise(text: str, chunks: Sequence[Any], seconds: float = 0.0) -> Cell:
    """The matrix's columns for an engine's ``chunks`` of ``text``."""
    cell = Cell(chunks=len(chunks), seconds=seconds)
    for c in chunks:
        kinds = {flag_kind(f) for f in c.flags}
        placement = sorted(k for k in kinds if k.startswith(_PLACEMENT_KINDS))
        cell.flagged.update(placement)
        cell.flagged_chunks += bool(placement)
        cell.over_limit += any(k.startswith("over limit") for k in kinds)
        cell.replacement += replaced(c)
        cell.byte_offsets += _offset_in_other_units(text, c.start, c.metadata.get("library_start"))
    cell.left_out = _uncovered(text, [(c.start, c.end) for c in chunks])
    declared = [(a, b) for c in chunks for a, b in c.metadata.get("left_out", ())]
    cell.left_out_flagged = _solid(text, declared)
    return cell


def replaced(chunk: Any) -> bool:
    """Whether the library's text of ``chunk`` holds U+FFFD that its slice does not."""
    library_text = chunk.metadata.get("library_text", chunk.text)
    return bool(library_text.count(BROKEN) > chunk.text.count(BROKEN))


def _offset_in_other_units(text: str, start: int, reported: Any) -> bool:
    """Whether a wrong reported offset counts UTF-8 bytes or UTF-16 units up to the
    chunk's true start."""
    if not isinstance(reported, int) or reported == start or reported < 0:
        return False
    before = text[:start]
    return reported in (len(before.encode("utf-8")), len(before.encode("utf-16-le")) // 2)


def _uncovered(text: str, spans: Sequence[tuple[int, int]]) -> int:
    """Non-whitespace characters of ``text`` outside every span."""
    covered = _merge(spans)
    total = sum(not ch.isspace() for ch in text)
    return total - sum(sum(not ch.isspace() for ch in text[a:b]) for a, b in covered)


def _solid(text: str, spans: Sequence[tuple[int, int]]) -> int:
    """Non-whitespace characters inside the union of ``spans``."""
    return sum(sum(not ch.isspace() for ch in text[a:b]) for a, b in _merge(spans))


def _merge(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def engines() -> list[str]:
    """Every library engine, in the order users see them."""
    from . import LIBRARIES

    return [spec.name for spec in LIBRARIES]


def matrix(
    names: Sequence[str] | None = None,
    rows: Sequence[TextClass] = TEXT_CLASSES,
    progress: Callable[[str, str], None] | None = None,
) -> dict[str, dict[str, Cell]]:
    """Every engine (or ``names``) on every row's text: engine -> row name -> cell."""
    out: dict[str, dict[str, Cell]] = {}
    for name in names or engines():
        out[name] = {}
        measure(name, WARM_UP)  # load the library (and its models) before timing
        for row in rows:
            if progress is not None:
                progress(name, row.name)
            out[name][row.name] = measure(name, row.text)
    return out


# --- export snippets declared exact, on every row -------------------------------------

#: Configurations whose export snippets are declared exact for some target; the matrix
#: runs each exact one on every row.
SNIPPET_CONFIGS: Final = (
    ("recursive", {"size": 400, "overlap": 50}),
    ("recursive", {"unit": "model", "size": 128, "overlap": 16}),
    ("token", {"size": 128, "overlap": 16}),
)

#: Reads a JSON list of texts on stdin, prints the snippet's chunks of each as JSON.
_RUNNER = """

if __name__ == "__main__":
    import json as _json
    import sys as _sys

    _texts = _json.loads(_sys.stdin.buffer.read().decode("utf-8"))
    _sys.stdout.buffer.write(_json.dumps([split(_t) for _t in _texts]).encode("utf-8"))
"""


@dataclass
class SnippetCell:
    """One exact snippet on one text: whether it returns our chunk texts."""

    chunks: int = 0
    #: Chunks that are not ours (counted by position, plus any difference in number).
    different: int = 0
    #: Chunks of the snippet's output that hold U+FFFD where ours do not.
    replacement: int = 0
    seconds: float = 0.0

    @property
    def exact(self) -> bool:
        return self.different == 0

    def text(self) -> str:
        if self.exact:
            return f"exact ({self.chunks} chunks)"
        fffd = f", {self.replacement} with U+FFFD" if self.replacement else ""
        return f"differs: {self.different} of {self.chunks} chunks{fffd}"


def exact_snippets() -> list[tuple[Config, str]]:
    """Every (configuration, target) of :data:`SNIPPET_CONFIGS` whose snippet is
    declared exact."""
    from ..output.snippets import TARGETS, snippet

    out: list[tuple[Config, str]] = []
    for strategy, params in SNIPPET_CONFIGS:
        config = Config.create(strategy, **params)
        # the spark job's split() is the python snippet's code: the python column is its
        targets = [t for t in TARGETS if t != "spark"]
        out.extend((config, t) for t in targets if snippet(config, t).fidelity == "exact")
    return out


def snippet_label(config: Config, target: str) -> str:
    """``"langchain: recursive · 400 chars · overlap 50"``."""
    return f"{target}: {config.label()}"


def run_snippet(config: Config, target: str, texts: Sequence[str], folder: Path) -> list[list[str]]:
    """The chunk texts that ``config``'s export snippet for ``target`` returns on each of
    ``texts``, run as a user would: Python snippets in a fresh interpreter (texts sent
    as JSON, so nothing is re-encoded), the command line on a UTF-8 file per text.
    ``folder`` is a scratch directory."""
    import json
    import os
    import shlex
    import subprocess
    import sys

    from ..output.snippets import seed_tiktoken_cache, snippet

    seed_tiktoken_cache()  # tiktoken's standard names then load offline
    made = snippet(config, target)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if target == "cli":
        words = shlex.split(made.code)  # shell words, as a shell would read them
        words[0] = str(Path(sys.executable).with_name("chunk-explorer"))
        out = []
        for i, text in enumerate(texts):
            path = folder / f"text{i}.txt"
            path.write_bytes(text.encode("utf-8"))
            argv = [str(path) if w == "INPUT.txt" else w for w in words]
            done = subprocess.run(argv, capture_output=True, env=env, check=True)
            rows = done.stdout.decode("utf-8").splitlines()
            out.append([json.loads(row)["text"] for row in rows])
        return out
    script = folder / "snippet.py"
    script.write_text(made.code + _RUNNER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        input=json.dumps(list(texts)).encode("utf-8"),
        capture_output=True,
        env=env,
        cwd=folder,
        check=True,
    )
    result: list[list[str]] = json.loads(done.stdout.decode("utf-8"))
    return result


def ours(config: Config, target: str, text: str) -> list[str]:
    """Our chunk texts for what the snippet is given: the text itself, or for the
    command line the text read back from its UTF-8 file (a BOM is read as the
    encoding's mark, as the app reads an upload)."""
    from ..core import run

    if target == "cli":
        from ..documents.io import read_bytes

        text = read_bytes(text.encode("utf-8"), "text.txt").text
    return [c.text for c in run(text, config)]


def compare(mine: Sequence[str], theirs: Sequence[str], seconds: float = 0.0) -> SnippetCell:
    """How far a snippet's chunks are from ours."""
    different = sum(a != b for a, b in zip(mine, theirs, strict=False))
    different += abs(len(mine) - len(theirs))
    fffd = sum(t.count(BROKEN) > m.count(BROKEN) for m, t in zip(mine, theirs, strict=False))
    return SnippetCell(len(theirs), different, fffd, seconds)


def snippet_matrix(
    folder: Path, rows: Sequence[TextClass] = TEXT_CLASSES
) -> dict[str, dict[str, SnippetCell]]:
    """Every exact snippet on every row: label -> row name -> cell."""
    texts = [row.text for row in rows]
    out: dict[str, dict[str, SnippetCell]] = {}
    for config, target in exact_snippets():
        started = time.perf_counter()
        got = run_snippet(config, target, texts, folder)
        seconds = (time.perf_counter() - started) / len(rows)
        out[snippet_label(config, target)] = {
            row.name: compare(ours(config, target, row.text), theirs, seconds)
            for row, theirs in zip(rows, got, strict=True)
        }
    return out
