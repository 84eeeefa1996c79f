"""Contextual retrieval: a sentence per chunk that situates it in its document.

Anthropic's technique: before embedding, a model reads the document and the chunk and
writes a short context ("This section of the Lodestar guide describes shard
rebalancing..."); the text embedded is that context followed by the chunk. The
evaluation embeds ``context + "\\n\\n" + chunk.text`` (``chunk-explorer evaluate
--context llm``); the chunk itself is unchanged: the context lives in
``metadata["context"]`` (:func:`contextual_chunks`).

A small model cannot read a long document for every chunk, so the prompt holds the
document's opening and the text around the chunk, up to ``window`` characters.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Chunk
from .answers import annotate, first_sentence
from .client import LLM, Request
from .cost import Progress, run_requests

CONTEXT_SYSTEM = "You situate excerpts within their document to improve search retrieval."
#: Characters of the document shown with each chunk (its opening and the chunk's
#: surroundings): about 400 tokens. Reading dominates a call's time on a CPU.
WINDOW = 1600


def document_window(document: str, chunk: Chunk, window: int = WINDOW) -> str:
    """The document when short, else its opening and the text around the chunk."""
    if len(document) <= window:
        return document
    head = document[: window // 3]
    half = (window - len(head)) // 2
    lo = max(len(head), chunk.start - half)
    hi = min(len(document), max(chunk.end + half, lo + 2 * half))
    gap = "\n[…]\n" if lo > len(head) else ""
    tail = "\n[…]" if hi < len(document) else ""
    return f"{head}{gap}{document[lo:hi]}{tail}"


def context_request(document: str, chunk: Chunk, title: str = "", window: int = WINDOW) -> Request:
    """The request for one chunk's context sentence."""
    named = f" titled {title!r}" if title else ""
    return Request(
        f"<document{named}>\n{document_window(document, chunk, window)}\n</document>\n"
        "Here is the chunk we want to situate within the whole document:\n"
        f"<chunk>\n{chunk.text}\n</chunk>\n"
        "Give one short sentence of context that situates this chunk within the overall "
        "document, to improve search retrieval of the chunk. Answer only with that sentence.",
        CONTEXT_SYSTEM,
        max_tokens=64,
        expected_tokens=36,
        stop=("\n\n",),
    )


def context_requests(
    document: str, chunks: Sequence[Chunk], title: str = "", window: int = WINDOW
) -> list[Request]:
    return [context_request(document, c, title, window) for c in chunks]


def llm_contexts(
    document: str,
    chunks: Sequence[Chunk],
    llm: LLM,
    progress: Progress | None = None,
    *,
    title: str = "",
) -> list[str]:
    """One situating sentence per chunk (cached on disk); offsets and text of chunks
    unchanged. Raises :class:`~chunking.llm.client.LLMError` when the model fails; the
    answers given before are kept in the cache."""
    answers = run_requests(llm, context_requests(document, chunks, title), progress).check()
    return [first_sentence(a) for a in answers]


def contextual_chunks(
    document: str, chunks: Sequence[Chunk], llm: LLM, progress: Progress | None = None
) -> list[Chunk]:
    """The chunks with ``metadata["context"]`` (see :func:`llm_contexts`)."""
    return annotate(chunks, "context", llm_contexts(document, chunks, llm, progress))
