"""Proposition chunking: atomic statements written by a language model, each placed on
the source span it came from.

The document is cut into passages of whole sentences (up to ``size``); the model
rewrites each passage as short self-contained statements, one per line. Every statement
is then located in its passage (:func:`chunking.llm.align.locate`): verbatim, or the
most similar run of words when its similarity reaches ``min_similarity``. The chunk is
that source span, so ``source[start:end] == text`` still holds; the model's own wording
is kept in ``metadata["proposition"]`` when it differs, with ``alignment`` (``verbatim``
or ``near``) and ``similarity``.

A statement that cannot be located is not given a guessed span: its chunk is the whole
passage it was written from, flagged ``"proposition not aligned: ..."``, with the
statement in the metadata. A passage the model wrote nothing for is kept whole and
flagged too. Propositions may overlap and need not cover every word (the model leaves
out what carries no fact): the invariant tests hold this strategy to exact offsets,
order and sizes, not to coverage.

Every call costs time: a run whose uncached calls are estimated above ``budget_seconds``
is refused with the estimate (the app's LLM tools page and ``--param budget_seconds=N``
run it anyway); answers are cached on disk, so a second run is free.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .. import params
from ..llm.align import locate
from ..llm.client import LLM, LOCAL, Request, check_llm_spec, resolve_llm
from ..llm.cost import estimate, run_requests
from ..model import Piece
from ..params import Param, Strategy
from ..units import Sizer
from .sentences import sentence_pieces

PROPOSITION_SYSTEM = "You rewrite passages as lists of simple, self-contained statements."
NOT_ALIGNED = "proposition not aligned"
NONE_WRITTEN = "no proposition"
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def proposition_request(passage: str, sizer: Sizer) -> Request:
    """The request that rewrites one passage (its answer: one statement per line)."""
    tokens = max(1, sizer.size(passage)) if sizer.name == "tokens" else len(passage) // 4 + 1
    return Request(
        "Decompose the passage into simple, self-contained propositions: one fact per "
        "line, each a short sentence that uses the passage's own words. Answer with the "
        f"list only.\n\n<passage>\n{passage}\n</passage>",
        PROPOSITION_SYSTEM,
        max_tokens=min(768, 2 * tokens + 32),
        expected_tokens=tokens + 8,
    )


def parse_propositions(answer: str) -> list[str]:
    """The statements of an answer: one per line, without list marks, headings ending
    in a colon, blank lines or repeats."""
    found: list[str] = []
    for line in answer.splitlines():
        statement = _LIST_MARK.sub("", line).strip()
        if statement and not statement.endswith(":") and statement not in found:
            found.append(statement)
    return found


def _passage_pieces(
    text: str, passage: Piece, statements: Sequence[str], min_similarity: float
) -> Iterator[Piece]:
    """Each statement on its span of ``passage`` (or the whole passage, flagged)."""
    carried = list(passage.metadata.get("flags", ()))
    if not statements:
        flag = f"{NONE_WRITTEN}: the model wrote none for this passage; kept whole"
        yield Piece(passage.start, passage.end, {"flags": [*carried, flag]})
        return
    cursor = passage.start
    seen: set[tuple[int, int]] = set()
    for statement in statements:
        match = locate(
            statement,
            text,
            passage.start,
            passage.end,
            prefer=cursor,
            min_similarity=min_similarity,
        )
        if match is None:
            flag = f"{NOT_ALIGNED}: kept on the span of its passage, the statement is in metadata"
            flagged = {"proposition": statement, "alignment": "none", "flags": [*carried, flag]}
            yield Piece(passage.start, passage.end, flagged)
            continue
        if (match.start, match.end) in seen:
            continue
        seen.add((match.start, match.end))
        cursor = match.end
        metadata: dict[str, Any] = {"alignment": "verbatim" if match.verbatim else "near"}
        if not match.verbatim:
            metadata |= {"proposition": statement, "similarity": match.similarity}
        yield Piece(match.start, match.end, metadata)


def _flag_over_limit(text: str, piece: Piece, sizer: Sizer, limit: int) -> Piece:
    size = sizer.size(text[piece.start : piece.end])
    if size <= limit or any(f.startswith("over limit:") for f in piece.metadata.get("flags", ())):
        return piece._replace(size=size)
    flag = f"over limit: the source span of a proposition is {size:,} {sizer.name}"
    flags = [*piece.metadata.get("flags", ()), flag]
    return Piece(piece.start, piece.end, {**piece.metadata, "flags": flags}, size)


def proposition_requests(
    text: str, p: Mapping[str, Any], sizer: Sizer
) -> tuple[list[Piece], list[Request]]:
    """The passages of ``text`` and the request that rewrites each (the app shows their
    cost and runs them with a progress bar before the strategy uses the cached answers)."""
    passages = [
        q for q in sentence_pieces(text, sizer, p["size"]) if not text[q.start : q.end].isspace()
    ]
    return passages, [proposition_request(text[q.start : q.end], sizer) for q in passages]


def proposition_pieces(
    text: str, p: Mapping[str, Any], sizer: Sizer, llm: LLM | None = None
) -> list[Piece]:
    """Passages, their propositions from ``llm`` (default: the one ``p["llm"]`` names),
    aligned; in source order."""
    llm = llm or resolve_llm(p["llm"])
    passages, requests = proposition_requests(text, p, sizer)
    cost = estimate(llm, requests)
    if cost.seconds > p["budget_seconds"]:
        raise ValueError(
            f"propositions would need {cost.describe()}, over the budget of "
            f"{p['budget_seconds']} s; raise budget_seconds to run it (answers are cached, "
            "so the next run is free)"
        )
    answers = run_requests(llm, requests).check()
    pieces = [
        _flag_over_limit(text, piece, sizer, p["size"])
        for passage, answer in zip(passages, answers, strict=True)
        for piece in _passage_pieces(text, passage, parse_propositions(answer), p["min_similarity"])
    ]
    return sorted(pieces, key=lambda q: (q.start, q.end))


def _check_llm(p: Mapping[str, Any]) -> None:
    check_llm_spec(p["llm"])


PROPOSITIONS = Strategy(
    "propositions",
    label="Propositions (LLM)",
    description="A language model rewrites each passage of whole sentences as short "
    "atomic statements; each statement becomes a chunk on the source span it came from "
    "(verbatim, or the most similar words). One that cannot be located is kept on its "
    "passage's span and flagged. Chunks may overlap and need not cover every word. Needs "
    "a model: the offline SmolLM2 (slow, weak) or an OpenAI-compatible endpoint.",
    params=(
        params.size_param(600, "Size of the passages given to the model, in the chosen unit."),
        params.unit_param("chars"),
        Param(
            "llm",
            str,
            LOCAL,
            "The model: 'local' (the offline SmolLM2-135M: slow, weak answers, for trying "
            "it) or an OpenAI-compatible endpoint as URL#MODEL, e.g. "
            "http://localhost:11434/v1#qwen2.5:3b (key from OPENAI_API_KEY).",
        ),
        Param(
            "min_similarity",
            float,
            0.6,
            "How similar (word-level, 0 to 1) a source span must be to a statement that is "
            "not verbatim for the statement to be placed there.",
            minimum=0.3,
            maximum=1.0,
        ),
        Param(
            "budget_seconds",
            int,
            0,
            "Seconds of new model calls allowed: a run whose uncached calls are estimated to "
            "take longer is refused with its cost. 0 uses only cached answers (run it once "
            "from the LLM tools page, or raise this); cached answers are free.",
            minimum=0,
            maximum=86_400,
        ),
    ),
    split=proposition_pieces,
    checks=(_check_llm,),
)
