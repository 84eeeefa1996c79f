"""Enrichment: a one-sentence summary and keywords per chunk, kept in its metadata.

Summaries need a language model (one call per chunk, through :mod:`chunking.llm.cost`);
keywords come from YAKE (the ``yake`` package: statistical, no model, instant) or from
the model. Both end up in ``metadata["summary"]`` and ``metadata["keywords"]``, which
every export carries (:mod:`chunking.export` writes the metadata as it is); the chunk's
offsets and text never change (:func:`chunking.llm.answers.annotate`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..model import Chunk
from .answers import annotate, first_sentence
from .client import LLM, Request
from .contextual import context_requests
from .cost import cached_answers

#: Keywords kept per chunk.
KEYWORDS = 5
#: Longest phrase YAKE may propose, in words.
KEYWORD_WORDS = 2
SUMMARY_SYSTEM = "You write one-sentence summaries of text passages."
KEYWORD_SYSTEM = "You list the key terms of text passages."
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def yake_keywords(
    texts: Iterable[str], top: int = KEYWORDS, language: str = "en"
) -> list[list[str]]:
    """The ``top`` keywords of each text by YAKE (no model; best first)."""
    import yake  # type: ignore[import-untyped]

    extractor = yake.KeywordExtractor(lan=language, n=KEYWORD_WORDS, top=top)
    return [[phrase for phrase, _ in extractor.extract_keywords(text)] for text in texts]


def summary_request(chunk_text: str) -> Request:
    return Request(
        "Summarise this passage in one short sentence. Answer with the sentence only.\n\n"
        f"Passage:\n{chunk_text}",
        SUMMARY_SYSTEM,
        max_tokens=60,
        expected_tokens=30,
        stop=("\n\n",),
    )


def keyword_request(chunk_text: str) -> Request:
    return Request(
        f"List the {KEYWORDS} most important key terms of this passage, separated by "
        f"commas. Answer with the terms only.\n\nPassage:\n{chunk_text}",
        KEYWORD_SYSTEM,
        max_tokens=40,
        expected_tokens=20,
    )


def parse_keywords(answer: str, top: int = KEYWORDS) -> list[str]:
    """Comma- or line-separated terms of an answer, without list marks or duplicates."""
    terms: list[str] = []
    for part in re.split(r"[,\n;]", answer):
        term = _LIST_MARK.sub("", part).strip().strip('."“”').strip()
        if term and len(term) <= 60 and term.casefold() not in {t.casefold() for t in terms}:
            terms.append(term)
    return terms[:top]


def enrichment_requests(
    document: str,
    chunks: Sequence[Chunk],
    *,
    context: bool = False,
    summary: bool = False,
    model_keywords: bool = False,
) -> dict[str, list[Request]]:
    """The requests of each model-written field asked for, by metadata key."""
    wanted: dict[str, list[Request]] = {}
    if context:
        wanted["context"] = context_requests(document, chunks)
    if summary:
        wanted["summary"] = [summary_request(c.text) for c in chunks]
    if model_keywords:
        wanted["keywords"] = [keyword_request(c.text) for c in chunks]
    return wanted


def annotate_answers(
    chunks: Sequence[Chunk], field: str, answers: Sequence[str | None]
) -> list[Chunk]:
    """The chunks with ``metadata[field]`` from the model's answers (None: not asked yet,
    left out), cleaned: keywords as a list, other fields as one sentence."""
    parse = parse_keywords if field == "keywords" else first_sentence
    return annotate(chunks, field, [parse(a) if a else "" for a in answers])


def written_notes(llm: LLM, document: str, chunk: Chunk) -> dict[str, str]:
    """What ``llm`` already wrote for ``chunk`` of ``document``: its context sentence
    and its summary (the first sentence of each answer), by metadata key, read from the
    answer cache; the model is never called, and a field not written yet is left out."""
    notes = {}
    for field, requests in enrichment_requests(
        document, [chunk], context=True, summary=True
    ).items():
        answer = cached_answers(llm, requests)[0]
        if answer:
            notes[field] = first_sentence(answer)
    return notes
