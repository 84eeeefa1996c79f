"""A static embedding model distilled from the bundled all-MiniLM-L6-v2 with model2vec:
a fast preview, of lower quality.

``model2vec.distill.distill`` runs every word piece of the bundled vocabulary through
the model once and keeps one vector per word piece (reduced to 256 dimensions by PCA);
a text's vector is then the mean of its word pieces' vectors, without any transformer.
That is about a hundred times faster than the model and blind to word order and
context, so its similarities only roughly follow the model's
(``tests/test_models_quality.py`` reports how roughly). The distillation runs once per
machine, offline, from the bundled directory (:mod:`.derived`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np

from ..model import Progress, report_fraction
from .base import Embedder, TokenizedEmbedder, bundled_model_path, untruncated
from .derived import build_once, fingerprint, models_dir

#: Changes whenever the distillation settings change, so that old builds are not used.
RECIPE = "v1"
PCA_DIMS = 256
#: Word pieces of a text that the static model reads (model2vec's default).
MAX_TOKENS = 512


def static_dir(source: Path | None = None) -> Path:
    """Where the static model distilled from ``source`` (default: bundled) lives."""
    source = source or bundled_model_path()
    return models_dir() / f"minilm-static-{RECIPE}-{fingerprint(source)}"


def build_static(progress: Progress | None = None, source: Path | None = None) -> Path:
    """The static model of ``source`` (default: the bundled model), distilled on first use."""
    source = source or bundled_model_path()

    def report(fraction: float, step: str) -> None:
        report_fraction(progress, fraction, step)

    def make(folder: Path) -> None:
        from model2vec.distill import distill

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        report(0.0, "distilling a static model from all-MiniLM-L6-v2 (every word piece once)")
        with _progress_of_distill(report):
            model = distill(model_name=str(source), pca_dims=PCA_DIMS)
        report(0.97, "saving")
        model.save_pretrained(str(folder))
        report(1.0, "done")

    return build_once(static_dir(source), make)


@contextmanager
def _progress_of_distill(report: Callable[[float, str], None]) -> Iterator[None]:
    """Forward model2vec's progress over the vocabulary to ``report`` while it distils.

    model2vec draws a tqdm bar and takes no callback, so its module's ``tqdm`` is swapped
    for a counter during the build; a model2vec without that bar just reports nothing.
    """
    from model2vec.distill import inference

    class Counter:
        def __init__(self, total: int | None = None, **_: Any) -> None:
            self.total, self.n = total or 0, 0

        def update(self, n: int = 1) -> None:
            self.n += n
            step = f"word pieces through the model: {self.n:,} of {self.total:,}"
            report(0.95 * self.n / max(1, self.total), step)

        def close(self) -> None:
            """Nothing to close: the bar is not drawn."""

    if not hasattr(inference, "tqdm"):
        yield
        return
    with patch.object(inference, "tqdm", Counter):
        yield


class StaticEmbedder(TokenizedEmbedder):
    """A model2vec static model: the mean of its word pieces' vectors."""

    def __init__(self, model: Any, name: str, note: str = "") -> None:
        super().__init__(untruncated(model.tokenizer))
        self.model = model
        self.name = name
        self.note = note
        self.dimension = int(model.dim)
        self.max_seq_length = MAX_TOKENS

    #: A static model does not pad: batches by count, not by padded size.
    plan_batches = Embedder.plan_batches

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(texts, max_length=MAX_TOKENS, use_multiprocessing=False)


def load_static(name: str, note: str, progress: Progress | None = None) -> StaticEmbedder:
    """The static model of the bundled all-MiniLM-L6-v2, distilled first if need be."""
    from model2vec import StaticModel

    folder = build_static(progress)
    return StaticEmbedder(StaticModel.from_pretrained(str(folder)), name, note)
