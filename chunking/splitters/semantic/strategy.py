"""The ``semantic`` strategy's declaration. The work is in :mod:`.analysis`, imported
only when a document is cut, so that registering the strategy loads no model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model import Piece
from ...params import Param, Strategy, model_param, unit_param
from ...units import DEFAULT_MODEL, DEFAULT_MODEL_WINDOW, Sizer
from .methods import (
    AUTO_MIN_SIZE,
    DEFAULT_MAX_SIZE,
    DEFAULT_UNIT,
    METHOD_DEFAULT,
    METHODS,
    THRESHOLD_HELP,
    check_threshold,
)


def _check_params(p: Mapping[str, Any]) -> None:
    if p["min_size"] != AUTO_MIN_SIZE and p["min_size"] >= p["max_size"]:
        raise ValueError(
            f"min_size ({p['min_size']}) must be smaller than max_size ({p['max_size']}); "
            "lower min_size or raise max_size"
        )
    if p["threshold"] != METHOD_DEFAULT and p["method"] != "auto":
        check_threshold(p["method"], p["threshold"])


def threshold_value(p: Mapping[str, Any]) -> float | None:
    """The registry's threshold as :meth:`SemanticAnalysis.chunk` takes it."""
    return None if p["threshold"] == METHOD_DEFAULT else float(p["threshold"])


def _semantic(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    # Imported here: the analysis loads the embedding model, which a plain
    # ``import chunking`` or a non-semantic chunk() must never do.
    from .analysis import analyze, get_embedder

    analysis = analyze(text, embedder=get_embedder(p["model"]), buffer_size=p["buffer_size"])
    result = analysis.chunk(
        method=p["method"],
        threshold=threshold_value(p),
        unit=sizer.name,
        max_size=p["max_size"],
        min_size=p["min_size"],
    )
    return [Piece(c.start, c.end, c.metadata, c.size) for c in result.chunks]


SEMANTIC = Strategy(
    "semantic",
    label="Semantic",
    description="Embed every sentence with its neighbours and cut where consecutive "
    "windows are least similar (LangChain's SemanticChunker methods, plus an absolute "
    "similarity cutoff, a chunk count and an automatic choice). Chunks over max_size "
    "are cut again at their weakest similarity; chunks under min_size are merged into "
    "their more similar neighbour. Runs the embedding model on this machine.",
    params=(
        Param(
            "method",
            str,
            "percentile",
            "How the cutoff on the distance series is chosen: similarity (absolute), "
            "percentile, std, iqr, gradient, count (a number of chunks) or auto "
            "(chosen from the distribution, with the reason shown).",
            choices=METHODS,
        ),
        Param("threshold", float, METHOD_DEFAULT, THRESHOLD_HELP, minimum=-1),
        Param(
            "buffer_size",
            int,
            1,
            "Sentences on each side embedded together with each sentence (LangChain's "
            "default is 1, a 3-sentence window; the seed suggests windows of 3-5 "
            "sentences, i.e. 1-2). 0 embeds sentences alone.",
            minimum=0,
            maximum=10,
        ),
        unit_param(DEFAULT_UNIT),
        Param(
            "max_size",
            int,
            DEFAULT_MAX_SIZE,
            "Largest chunk, in the chosen unit; larger ones are cut at their weakest "
            f"similarity. The default, {DEFAULT_MAX_SIZE} word pieces (unit model), is what "
            f"{DEFAULT_MODEL} reads of a chunk: {DEFAULT_MODEL_WINDOW} with [CLS] and [SEP].",
            minimum=1,
            maximum=1_000_000,
        ),
        Param(
            "min_size",
            int,
            AUTO_MIN_SIZE,
            "Smallest chunk, in the chosen unit; smaller ones are merged into their more "
            "similar neighbour. -1, the default, is a tenth of max_size (rounded up), "
            "which avoids one-sentence fragments; 0 keeps every cut the method makes.",
            minimum=AUTO_MIN_SIZE,
            maximum=1_000_000,
        ),
        model_param(),
    ),
    checks=(_check_params,),
    limit_param="max_size",
    split=_semantic,
)
