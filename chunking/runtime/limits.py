"""The bounds of every cache the app keeps, in one table (:data:`CACHE_BOUNDS`).

A cache with a byte bound is a :class:`chunking.runtime.lru.BoundedLRU` (the pages reach
theirs through ``pages/cached.py``'s ``bounded``); the least recently used entry goes
first. A few caches are bounded by entries alone, and their row says why that suffices.
Together the byte bounds are what the caches can hold at most in one server process
(:func:`total_bytes`), whatever the number of sessions: the caches are shared.
"""

from __future__ import annotations

from dataclasses import dataclass

MB = 1024 * 1024


@dataclass(frozen=True)
class CacheBound:
    """How many entries and bytes a cache keeps, what it holds and where it lives;
    ``max_bytes`` None for a cache bounded by entries alone, ``why`` saying why."""

    max_entries: int
    max_bytes: int | None
    holds: str
    where: str
    why: str = ""


#: Every cache of the app and of the core, by name.
CACHE_BOUNDS: dict[str, CacheBound] = {
    # ------------------------------------------------------------ documents and chunks
    "uploads": CacheBound(8, 128 * MB, "uploaded documents as read", "pages/sidebar.py"),
    "samples": CacheBound(16, 32 * MB, "the sample documents as read", "pages/sidebar.py"),
    "chunks": CacheBound(64, 192 * MB, "chunk lists per document and config", "pages/cached.py"),
    "reports": CacheBound(32, 32 * MB, "chunk reports (sizes in every unit)", "pages/cached.py"),
    "boundary_pages": CacheBound(32, 32 * MB, "the boundary view's pages", "pages/cached.py"),
    "recommendations": CacheBound(
        32, 8 * MB, "the suggested configuration per document", "pages/cached.py"
    ),
    "page_html": CacheBound(64, 32 * MB, "rendered pages of the text view", "pages/text_view.py"),
    "pdf_pages": CacheBound(32, 64 * MB, "page images of PDFs", "pages/pdf_view.py"),
    "chunk_tables": CacheBound(16, 64 * MB, "the chunk tables", "pages/chunk_tables.py"),
    # ------------------------------------------------------------- embeddings and maps
    "embedding_vectors": CacheBound(
        100_000, 192 * MB, "embedding vectors by model and text", "chunking/embedding/cache.py"
    ),
    "core_projections": CacheBound(
        32, 64 * MB, "projections by vectors and settings", "chunking/embedding/projection.py"
    ),
    "late_vectors": CacheBound(
        64, 128 * MB, "late-chunking vectors per document", "chunking/evaluation/late.py"
    ),
    "semantic_analyses": CacheBound(
        6, 128 * MB, "semantic analyses (sentence embeddings)", "pages/semantic_page.py"
    ),
    "semantic_results": CacheBound(
        64, 64 * MB, "semantic chunks per threshold", "pages/semantic_page.py"
    ),
    "chunk_embeddings": CacheBound(
        32, 128 * MB, "chunk embeddings for the map", "pages/map_page.py"
    ),
    "projections": CacheBound(32, 32 * MB, "2-D and 3-D projections", "pages/map_page.py"),
    "lens_maps": CacheBound(16, 32 * MB, "questions on the map", "pages/map_questions.py"),
    # ------------------------------------------------------------ evaluation and more
    "sweeps": CacheBound(
        16, 128 * MB, "evaluation sweeps with their lenses", "pages/evaluate_grid.py"
    ),
    "code_texts": CacheBound(8, 32 * MB, "cut files of the code set", "pages/evaluate_code_set.py"),
    "keywords": CacheBound(16, 8 * MB, "YAKE keywords of chunks", "pages/llm_page.py"),
    "piece_starts": CacheBound(
        1000, 64 * MB, "word-piece starts of corpus documents", "pages/corpus_page.py"
    ),
    "sentence_starts": CacheBound(
        16, 32 * MB, "sentence starts of the boundary editor", "pages/boundary_editor.py"
    ),
    "tune_plans": CacheBound(4, 16 * MB, "Tune's counts and estimates", "pages/tune_page.py"),
    # ------------------------------------------------- markers: what was done already
    "projection_counts": CacheBound(
        4096, 4 * MB, "how often each projection was computed", "pages/map_page.py"
    ),
    "view_seconds": CacheBound(4096, 4 * MB, "the map's first-view times", "pages/map_page.py"),
    "embedded_markers": CacheBound(
        4096, 4 * MB, "what was embedded with progress shown", "pages/model_choice.py"
    ),
    # ------------------------------------------------------------- bounded by entries
    "histograms": CacheBound(
        6,
        None,
        "distance histograms (plotly figures)",
        "pages/semantic_page.py",
        "one per kept semantic analysis: a figure of its distances, a small fraction of "
        "the analysis's own bytes, which that cache bounds",
    ),
    "question_sets": CacheBound(
        8,
        None,
        "chroma-eval corpora and questions",
        "pages/evaluate_questions.py",
        "read from the installed package: a fixed set of files, the same for every session",
    ),
    "code_sets": CacheBound(
        2,
        None,
        "the bundled code set",
        "pages/evaluate_code_set.py",
        "the one bundled data set, read from disk",
    ),
}


def total_bytes() -> int:
    """The bytes all byte-bounded caches may hold together."""
    return sum(b.max_bytes or 0 for b in CACHE_BOUNDS.values())
