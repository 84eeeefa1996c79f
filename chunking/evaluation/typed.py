"""Questions typed by the user, one per line, each with an optional answer excerpt.

::

    What do dogs do? | Dogs bark.
    Where do fish live?

The text after the first ``|`` is the excerpt. It is located in the documents with
:func:`chunking.llm.align.locate`, the locating code of the generated questions:
verbatim first (the first occurrence; how many there are is reported), else as a near
match of its words whose similarity is reported, if it reaches
:data:`~chunking.llm.questions.MIN_SIMILARITY`. A located excerpt becomes the question's
gold span, always the document's own text at real offsets.

Nothing is dropped silently: every line gets a :class:`TypedLine` saying what became
of it. A question whose excerpt is not found, or that has none, has no gold span and is
not evaluated (recall needs one); it is listed with its status.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..llm.align import Match, locate
from ..llm.questions import MIN_SIMILARITY
from .questions import Question, Reference

SEPARATOR = "|"
LOCATED = "located"
NEAR_MATCH = "near match"
NOT_FOUND = "not found"
NO_EXCERPT = "no excerpt"
#: Every status a typed line can get.
STATUSES = (LOCATED, NEAR_MATCH, NOT_FOUND, NO_EXCERPT)


@dataclass(frozen=True)
class TypedLine:
    """One typed question and what became of its excerpt.

    ``start``/``end`` (with ``corpus_id``) are the gold span when the excerpt was
    located; ``similarity`` is 1 for a verbatim excerpt; ``occurrences`` counts the
    verbatim occurrences in that document (the first one is the gold span).
    """

    line: int
    question: str
    excerpt: str
    status: str
    corpus_id: str | None = None
    start: int | None = None
    end: int | None = None
    similarity: float | None = None
    occurrences: int = 0

    def describe(self) -> str:
        """What happened, in one line."""
        head = f"line {self.line}: {self.status}"
        if self.status == LOCATED:
            extra = f", first of {self.occurrences}" if self.occurrences > 1 else ""
            return f"{head} in {self.corpus_id} at [{self.start}, {self.end}){extra}"
        if self.status == NEAR_MATCH:
            return (
                f"{head} in {self.corpus_id} at [{self.start}, {self.end}), similarity "
                f"{self.similarity:.2f}"
            )
        if self.status == NOT_FOUND:
            return f"{head}: the excerpt is in no document, not even nearly; not evaluated"
        return f"{head}: no gold span, not evaluated"


@dataclass(frozen=True)
class TypedQuestions:
    """The questions with a gold span (numbered 0, 1, ... in line order) and the fate
    of every line."""

    questions: tuple[Question, ...]
    lines: tuple[TypedLine, ...]

    def count(self, status: str) -> int:
        return sum(line.status == status for line in self.lines)

    @property
    def unevaluated(self) -> tuple[TypedLine, ...]:
        """The lines without a gold span (excerpt not found, or none)."""
        return tuple(line for line in self.lines if line.status in (NOT_FOUND, NO_EXCERPT))

    def describe(self) -> str:
        """``"3 questions: 1 located, 1 near match, 1 not found, 0 no excerpt"``."""
        parts = ", ".join(f"{self.count(s)} {s}" for s in STATUSES)
        n = len(self.lines)
        return f"{n} question{'s' if n != 1 else ''}: {parts}"


def _best(excerpt: str, documents: Mapping[str, str]) -> tuple[str, Match] | None:
    """The first verbatim occurrence in document order, else the most similar near
    match over every document."""
    near: tuple[str, Match] | None = None
    for corpus_id, text in documents.items():
        match = locate(excerpt, text, min_similarity=MIN_SIMILARITY)
        if match is None:
            continue
        if match.verbatim:
            return corpus_id, match
        if near is None or match.similarity > near[1].similarity:
            near = (corpus_id, match)
    return near


def parse_typed_questions(text: str, documents: Mapping[str, str]) -> TypedQuestions:
    """Read typed questions (one per line, ``question | excerpt``) about ``documents``
    (id -> text). Blank lines are skipped; a line with an excerpt but no question is a
    ``ValueError`` naming the line, as is text without any question."""
    if not documents:
        raise ValueError("there is no document to locate the excerpts in")
    lines: list[TypedLine] = []
    questions: list[Question] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        asked, _, excerpt = raw.partition(SEPARATOR)
        asked, excerpt = asked.strip(), excerpt.strip()
        if not asked:
            raise ValueError(
                f"line {number}: there is no question before {SEPARATOR!r}; write "
                "'question | excerpt'"
            )
        if not excerpt:
            lines.append(TypedLine(number, asked, "", NO_EXCERPT))
            continue
        found = _best(excerpt, documents)
        if found is None:
            lines.append(TypedLine(number, asked, excerpt, NOT_FOUND))
            continue
        corpus_id, match = found
        document = documents[corpus_id]
        occurrences = document.count(document[match.start : match.end]) if match.verbatim else 0
        lines.append(
            TypedLine(
                number,
                asked,
                excerpt,
                LOCATED if match.verbatim else NEAR_MATCH,
                corpus_id,
                match.start,
                match.end,
                match.similarity,
                occurrences,
            )
        )
        reference = Reference(match.start, match.end, document[match.start : match.end])
        questions.append(Question(len(questions), asked, corpus_id, (reference,)))
    if not lines:
        raise ValueError("no question typed; write one question per line")
    return TypedQuestions(tuple(questions), tuple(lines))
