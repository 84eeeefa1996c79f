"""What the ``model`` unit counts once a model is chosen: that model's own tokens.

The kernel's ``model`` unit is the bundled all-MiniLM-L6-v2's word pieces. A size in
``model`` means "in the word pieces of the model that reads the chunks", so when a
command or page knows the chosen model it resolves the unit to one the kernel already
counts (:func:`model_unit`), and the configuration then says what it counts:

- the bundled model and the models derived from it (``minilm``, ``minilm-onnx-int8``,
  ``minilm-static``): ``model`` itself, the bundled word pieces;
- a local sentence-transformers folder: ``tokenizer:PATH`` to its own
  ``tokenizer.json``, with its ``max_seq_length`` less the special tokens its tokenizer
  adds;
- an endpoint: the tokenizer of a known hosted model (``tokens``, cl100k_base, for
  OpenAI's text-embedding-3-*) and its window, else what ``--embed-tokenizer`` and
  ``--embed-window`` give (guessed otherwise, with a warning);
- a model whose tokenizer cannot be counted here (use-multilingual,
  multilingual-e5-small, a folder without ``tokenizer.json``): ``model`` stays the
  bundled word pieces, and :attr:`ModelUnit.warning` says so in one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..config import Config
from ..units import DEFAULT_MODEL as BUNDLED
from ..units import DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS, TOKENIZER_PREFIX, load_hf_tokenizer
from .base import HASH_MODEL
from .endpoint import EndpointSpec, is_endpoint
from .models import canonical_model_name
from .offline import E5, USE
from .registry import named_model

#: The window assumed for a folder whose configuration gives none.
FOLDER_WINDOW = 512
#: What the bundled word pieces are called where the UI names them.
BUNDLED_PIECES = f"{BUNDLED} word pieces"


@dataclass(frozen=True)
class ModelUnit:
    """The unit the ``model`` unit stands for with one model.

    ``unit`` is one the kernel counts (``model``, ``tokens`` or ``tokenizer:PATH``);
    ``window`` the tokens of a chunk the model reads, special tokens left out;
    ``counts`` whose tokens they are, as the UI says it; ``warning`` one line when the
    model's own tokens cannot be counted (or its window is guessed), else empty.
    """

    unit: str
    window: int
    counts: str
    warning: str = ""


def _bundled(warning: str = "") -> ModelUnit:
    return ModelUnit("model", DEFAULT_MODEL_WINDOW - SPECIAL_TOKENS, BUNDLED_PIECES, warning)


def _cannot_count(name: str, why: str = "") -> str:
    return (
        f"the model unit cannot count {name}'s own tokens here{why}; sizes in 'model' "
        f"are {BUNDLED_PIECES}"
    )


def model_unit(model: str | None) -> ModelUnit:
    """The unit and window of the chosen ``model`` (see the module's list); ``ValueError``
    for a malformed endpoint name or an unreadable ``tokenizer.json``."""
    name = canonical_model_name(model)
    if name == HASH_MODEL:
        return _bundled()
    if is_endpoint(name):
        spec = EndpointSpec.parse(name)
        window = spec.max_seq_length - spec.special_tokens
        warning = (
            f"the endpoint model {spec.model}'s {' and '.join(spec.guessed)} are guessed "
            f"({window:,} {spec.tokenizer_label}); set --embed-window and --embed-tokenizer"
            if spec.guessed
            else ""
        )
        return ModelUnit(spec.unit, window, spec.tokenizer_label, warning)
    named = named_model(name)
    if named is not None:
        if named.key in (USE, E5):
            return ModelUnit(
                "model",
                named.max_tokens - SPECIAL_TOKENS,
                BUNDLED_PIECES,
                _cannot_count(named.name),
            )
        return ModelUnit("model", named.max_tokens - SPECIAL_TOKENS, BUNDLED_PIECES)
    folder = Path(name)
    if folder.is_dir():
        return _folder_unit(folder)
    # A name that is neither named, nor a folder, nor an endpoint is not available offline:
    # loading it fails with its own one line, so no warning goes before that error.
    return _bundled()


#: The files of a model folder that decide its unit (read again when one changes).
_FOLDER_FILES = ("tokenizer.json", "sentence_bert_config.json", "tokenizer_config.json")


def _folder_unit(folder: Path) -> ModelUnit:
    """A sentence-transformers folder: its ``tokenizer.json`` and ``max_seq_length``,
    read once while those files stay as they are (the app asks on every rerun)."""
    return _read_folder_unit(folder, tuple(_stamp(folder / name) for name in _FOLDER_FILES))


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


@lru_cache(maxsize=16)
def _read_folder_unit(folder: Path, stamps: tuple[tuple[int, int] | None, ...]) -> ModelUnit:
    tokenizer = folder / "tokenizer.json"
    if not tokenizer.is_file():
        return _bundled(_cannot_count(str(folder), " (no tokenizer.json)"))
    special = len(load_hf_tokenizer(tokenizer).encode("", add_special_tokens=True).ids)
    warning = ""
    length = _read_number(folder / "sentence_bert_config.json", "max_seq_length")
    if length is None:
        length = _read_number(folder / "tokenizer_config.json", "model_max_length")
    if length is None:
        length = FOLDER_WINDOW
        warning = f"{folder} gives no max_seq_length; its window is taken as {FOLDER_WINDOW}"
    return ModelUnit(
        f"{TOKENIZER_PREFIX}{tokenizer.resolve()}",
        max(1, length - special),
        f"word pieces of {folder.name}'s tokenizer.json",
        warning,
    )


def _read_number(path: Path, key: str) -> int | None:
    """A whole number under ``key`` in the JSON file ``path`` (None when absent or huge:
    tokenizers write 1e30 for "no limit")."""
    try:
        value: Any = json.loads(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if 0 < value < 10_000_000 else None


def follow_model(config: Config, model: str | None) -> tuple[Config, ModelUnit | None]:
    """``config`` with its ``model`` unit resolved for ``model`` (:func:`model_unit`),
    and the resolution; unchanged (and None) when its unit is not ``model`` or no
    model is chosen."""
    if model is None or not model.strip() or config.params.get("unit") != "model":
        return config, None
    resolved = model_unit(model)
    if resolved.unit == "model":
        return config, resolved
    return Config.create(config.strategy, **{**config.params, "unit": resolved.unit}), resolved


def resolve_units(units: list[str] | tuple[str, ...], model: str | None) -> list[str]:
    """A list of units with ``model`` resolved for ``model`` (a sweep's or a search's
    unit axis), without duplicates."""
    if model is None or "model" not in units:
        return list(units)
    resolved = model_unit(model).unit
    return list(dict.fromkeys(resolved if u == "model" else u for u in units))
