"""Evaluation questions for your own documents, written by a language model.

Evaluation needs questions with gold spans. As in Chroma's synthetic evaluation, the
model reads a passage, proposes a question and quotes the excerpts that answer it.
Every excerpt is then located in the document (:func:`chunking.llm.align.locate`):
verbatim, or a near match whose similarity is reported; the gold span is always the
document's own text at real offsets. A question with an excerpt that cannot be located,
or an answer not in the asked format, is dropped and counted, never given invented
spans.

The result is a question file in the format :mod:`chunking.evaluation.questions` reads
(columns ``question``, ``references``, ``corpus_id``; a ``match`` column says how each
excerpt was found), so the Evaluate page and ``chunk-explorer evaluate`` take it as is.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..config import Config
from ..core import run
from .align import Match, locate
from .client import LLM, Request
from .cost import Progress, Run, ShouldStop, run_requests

QUESTION_SYSTEM = "You write evaluation questions about documents and quote their answers."
#: Size of the passages a question is written from, in characters.
PASSAGE_CHARS = 1200
#: Shortest excerpt accepted, in words (shorter quotes match almost anywhere).
MIN_EXCERPT_WORDS = 3
#: How similar a quoted excerpt must be to the source to count as a near match.
MIN_SIMILARITY = 0.8
COLUMNS = ("question", "references", "corpus_id", "match")
_LABEL = re.compile(r"^\s*(?:[-*•]\s*)?\**(question|excerpt|quote)s?\s*\d*\s*:\s*\**\s*(.*)$", re.I)


@dataclass(frozen=True)
class Passage:
    """Where a question is written from."""

    corpus_id: str
    start: int
    end: int


@dataclass(frozen=True)
class Excerpt:
    """A gold span: ``document[start:end] == content``; ``quoted`` is the model's text."""

    content: str
    start: int
    end: int
    quoted: str
    match: Match


@dataclass(frozen=True)
class GeneratedQuestion:
    question: str
    corpus_id: str
    excerpts: tuple[Excerpt, ...]


@dataclass
class QuestionSet:
    """The questions kept and what happened to the others."""

    questions: list[GeneratedQuestion]
    proposed: int
    unlocated: int
    malformed: int
    #: The run that asked the model (None when the answers came from the cache).
    run: Run | None = None

    @property
    def verbatim_share(self) -> float:
        """Share of the kept excerpts found verbatim (the rest are near matches)."""
        excerpts = [e for q in self.questions for e in q.excerpts]
        return sum(e.match.verbatim for e in excerpts) / len(excerpts) if excerpts else 0.0

    def describe(self) -> str:
        share = (
            f"{self.verbatim_share:.0%} of the kept excerpts verbatim, the rest near matches"
            if self.questions
            else "no excerpt kept"
        )
        return (
            f"{self.proposed} question{'s' if self.proposed != 1 else ''} proposed, "
            f"{len(self.questions)} kept; dropped: "
            f"{self.unlocated} with an excerpt not found in the document, {self.malformed} "
            f"not in the asked format; {share}"
        )


def passages(documents: Mapping[str, str], n: int, size: int = PASSAGE_CHARS) -> list[Passage]:
    """``n`` passages spread over the documents in turn, evenly within each document;
    fewer when the documents have fewer passages (one question per passage)."""
    if n < 1:
        raise ValueError(f"ask for at least one question; got {n}")
    config = Config.create("paragraph", size=size, unit="chars")
    spans = {
        name: [(c.start, c.end) for c in run(text, config)] for name, text in documents.items()
    }
    spans = {name: found for name, found in spans.items() if found}
    if not spans:
        raise ValueError("the documents are empty; there is nothing to ask about")
    names = list(spans)
    wanted = {name: n // len(names) + (i < n % len(names)) for i, name in enumerate(names)}
    picked = []
    for name in names:
        found = spans[name]
        k = min(wanted[name], len(found))
        step = len(found) / k if k else 0
        picked += [Passage(name, *found[int(i * step)]) for i in range(k)]
    return picked


def question_request(passage: str) -> Request:
    return Request(
        "Read the passage. Write one question that the passage answers, then copy word for "
        "word the sentence of the passage that answers it.\n\n"
        f"<passage>\n{passage}\n</passage>\n\n"
        "Answer in exactly this format:\nQuestion: <the question>\n"
        "Excerpt: <a sentence copied from the passage>",
        QUESTION_SYSTEM,
        max_tokens=120,
        expected_tokens=60,
        stop=("\nQuestion",),
    )


def parse_answer(answer: str) -> tuple[str, list[str]] | None:
    """The question and the quoted excerpts of an answer, or None when it is not in the
    asked format."""
    question = ""
    excerpts: list[str] = []
    for line in answer.splitlines():
        labelled = _LABEL.match(line)
        if labelled is None:
            continue
        kind, value = labelled.group(1).lower(), labelled.group(2).strip().strip('"“”').strip()
        if kind == "question" and not question:
            question = value
        elif kind != "question" and len(value.split()) >= MIN_EXCERPT_WORDS:
            excerpts.append(value)
    if not question or not excerpts:
        return None
    return question, excerpts


def _excerpts(quotes: Sequence[str], document: str, passage: Passage) -> tuple[Excerpt, ...] | None:
    """Each quote located (in its passage first, then anywhere), or None if one is not."""
    found = []
    for quote in quotes:
        match = locate(quote, document, passage.start, passage.end, min_similarity=MIN_SIMILARITY)
        match = match or locate(quote, document, min_similarity=MIN_SIMILARITY)
        if match is None:
            return None
        found.append(
            Excerpt(document[match.start : match.end], match.start, match.end, quote, match)
        )
    return tuple(found)


def question_requests(documents: Mapping[str, str], picked: Sequence[Passage]) -> list[Request]:
    return [question_request(documents[p.corpus_id][p.start : p.end]) for p in picked]


def collect_questions(
    documents: Mapping[str, str],
    picked: Sequence[Passage],
    answers: Sequence[str | None],
    run: Run | None = None,
) -> QuestionSet:
    """The questions of the answers given so far (None: not asked yet), each excerpt
    located; the rest dropped and counted."""
    kept: list[GeneratedQuestion] = []
    unlocated = malformed = 0
    for passage, answer in zip(picked, answers, strict=True):
        if answer is None:
            continue
        parsed = parse_answer(answer)
        if parsed is None:
            malformed += 1
            continue
        excerpts = _excerpts(parsed[1], documents[passage.corpus_id], passage)
        if excerpts is None:
            unlocated += 1
            continue
        kept.append(GeneratedQuestion(parsed[0], passage.corpus_id, excerpts))
    proposed = sum(a is not None for a in answers)
    return QuestionSet(kept, proposed, unlocated, malformed, run)


def generate_questions(
    documents: Mapping[str, str],
    n: int,
    llm: LLM,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    *,
    passage_size: int = PASSAGE_CHARS,
) -> QuestionSet:
    """Up to ``n`` questions about ``documents`` (id -> text), one model call each, from
    passages of about ``passage_size`` characters.

    An error or a cancel stops the run; the questions from the answers before it are
    returned (``run.error``, ``run.cancelled`` say why it stopped).
    """
    picked = passages(documents, n, passage_size)
    done = run_requests(llm, question_requests(documents, picked), progress, should_stop)
    return collect_questions(documents, picked, done.answers, done)


def _reference(excerpt: Excerpt) -> dict[str, object]:
    return {"content": excerpt.content, "start_index": excerpt.start, "end_index": excerpt.end}


def question_rows(questions: Sequence[GeneratedQuestion]) -> list[dict[str, str]]:
    """The question file's rows (``references`` as JSON text)."""
    return [
        {
            "question": q.question,
            "references": json.dumps([_reference(e) for e in q.excerpts], ensure_ascii=False),
            "corpus_id": q.corpus_id,
            "match": "; ".join(e.match.describe() for e in q.excerpts),
        }
        for q in questions
    ]


def to_csv(questions: Sequence[GeneratedQuestion]) -> str:
    """The question file as CSV, as ``chunk-explorer evaluate --questions`` reads it."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows(question_rows(questions))
    return out.getvalue()
