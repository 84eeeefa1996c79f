"""Retrieval techniques: how chunks are searched, embedded, given context and returned.

A :class:`Technique` combines four independent choices, each applicable to any chunking
configuration:

- ``retriever``: ``dense`` (cosine similarity of embeddings), ``bm25`` (lexical, the
  ``bm25s`` library) or ``hybrid`` (reciprocal-rank fusion of the two,
  :func:`chunking.evaluation.retrievers.reciprocal_rank_fusion`);
- ``embedding``: ``naive`` (each chunk's text embedded alone) or ``late`` (token vectors
  of the whole document, pooled over each chunk's span, :mod:`chunking.evaluation.late`);
- ``context``: ``none``, ``headers`` (document title and heading path) or ``llm`` (a
  situating sentence written by a language model), prepended to the text that is embedded
  or indexed, never to the chunk (:mod:`chunking.evaluation.context`);
- ``returned``: ``chunk``, ``parent`` (retrieve the small chunks of a parent-child
  configuration, return their parents) or ``window:N`` (the chunk and ``N`` neighbours on
  each side, clipped at the document's edges).

The metrics are computed on what is returned, so ``parent`` and ``window:N`` trade
precision for recall by construction.

>>> Technique.parse(retriever="hybrid", returned="window:1").name
'hybrid + window:1'
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Config
from ..params import Param

RETRIEVERS = ("dense", "bm25", "hybrid")
EMBEDDINGS = ("naive", "late")
CONTEXTS = ("none", "headers", "llm")
#: The fixed choices of ``returned``; ``window:N`` is the open-ended one.
RETURNS = ("chunk", "parent")
WINDOW = "window:"
#: The strategy whose chunks know their parent (metadata ``parent``).
PARENT_STRATEGY = "hierarchy"

#: The four axes of a technique, declared once: the command line's flags
#: (``--retriever``, ``--embedding``, ``--context``, ``--return``) and the Evaluate page's
#: controls are made from these, with these defaults, choices and help texts.
AXES = (
    Param(
        "retriever",
        str,
        "dense",
        "dense: cosine similarity of embeddings; bm25: words (bm25s, Lucene variant); "
        "hybrid: reciprocal-rank fusion of both (k = 60)",
        choices=RETRIEVERS,
    ),
    Param(
        "embedding",
        str,
        "naive",
        "naive: each chunk embedded alone; late: token vectors of the whole document "
        "pooled over each chunk's span",
        choices=EMBEDDINGS,
    ),
    Param(
        "context",
        str,
        "none",
        "text put before each chunk when it is embedded or indexed (the chunk itself is "
        "unchanged): headers, the document's title and the chunk's heading path; llm, a "
        "situating sentence written by a language model",
        choices=CONTEXTS,
    ),
    Param(
        "returned",
        str,
        "chunk",
        "what a retrieved chunk hands over (the metrics score it): itself, its parent "
        "(parent-child configurations) or itself with N neighbours on each side",
        choices=RETURNS,
        pattern=rf"{WINDOW}\d+",
        pattern_help="window:N",
    ),
)


def _choice(kind: str, value: str, choices: tuple[str, ...]) -> str:
    cleaned = value.strip().lower()
    if cleaned not in choices:
        raise ValueError(f"unknown {kind} {value!r}; choose one of: {', '.join(choices)}")
    return cleaned


def window_size(returned: str) -> int | None:
    """``N`` of ``window:N``; ``None`` for the other returned units."""
    if not returned.startswith(WINDOW):
        return None
    return int(returned[len(WINDOW) :])


def _returned(value: str) -> str:
    cleaned = value.strip().lower()
    if cleaned in RETURNS:
        return cleaned
    if cleaned.startswith(WINDOW):
        raw = cleaned[len(WINDOW) :]
        if raw.isdigit():
            return f"{WINDOW}{int(raw)}"
        raise ValueError(
            f"returned unit {value!r}: N in window:N must be a whole number of "
            "neighbours on each side, 0 or more (e.g. window:1)"
        )
    raise ValueError(f"unknown returned unit {value!r}; choose one of: chunk, parent, window:N")


@dataclass(frozen=True)
class Technique:
    """One way of retrieving: retriever, chunk embedding, context and returned unit."""

    retriever: str = "dense"
    embedding: str = "naive"
    context: str = "none"
    returned: str = "chunk"

    @classmethod
    def parse(
        cls,
        retriever: str = "dense",
        embedding: str = "naive",
        context: str = "none",
        returned: str = "chunk",
    ) -> Technique:
        """A technique from user input; ``ValueError`` naming the choices otherwise."""
        return cls(
            _choice("retriever", retriever, RETRIEVERS),
            _choice("embedding", embedding, EMBEDDINGS),
            _choice("context", context, CONTEXTS),
            _returned(returned),
        )

    @property
    def uses_vectors(self) -> bool:
        """Whether chunks must be embedded (the BM25 retriever alone needs no model)."""
        return self.retriever != "bm25"

    @property
    def name(self) -> str:
        """The choices that differ from plain dense retrieval of chunks, joined by
        ``+`` (``bm25``, ``late + headers``, ``parent``); ``dense`` for none."""
        parts = [
            self.retriever if self.retriever != "dense" else "",
            self.embedding if self.embedding != "naive" else "",
            self.context if self.context != "none" else "",
            self.returned if self.returned != "chunk" else "",
        ]
        return " + ".join(p for p in parts if p) or "dense"

    def check(self, config: Config) -> None:
        """Raise ``ValueError`` if this technique cannot run on ``config``."""
        if self.returned == "parent" and config.strategy != PARENT_STRATEGY:
            raise ValueError(
                f"returning parents needs a parent-child configuration (strategy "
                f"{PARENT_STRATEGY!r}); {config.strategy!r} chunks have no parent"
            )


DENSE = Technique()
#: The rows of the techniques table, plain dense retrieval first (the reference).
TABLE_TECHNIQUES = (
    DENSE,
    Technique(retriever="bm25"),
    Technique(retriever="hybrid"),
    Technique(embedding="late"),
    Technique(context="headers"),
    Technique(embedding="late", context="headers"),
    Technique(returned="parent"),
    Technique(returned="window:1"),
)
