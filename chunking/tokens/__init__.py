"""Fast, exact tokenizers behind the token units (:mod:`chunking.units`).

- :mod:`chunking.tokens.cl100k`: cl100k_base ids with ``gigatoken`` where it is
  installed, ``tiktoken`` otherwise, both read from the same local ``.tiktoken`` file.
- :mod:`chunking.tokens.wordpiece`: the bundled model's word pieces with ``tokie``
  where it is installed, Hugging Face ``tokenizers`` otherwise.

Each module is told where its files are and how to load its fallback by
:mod:`chunking.units`, which imports them; nothing here imports the rest of
``chunking``. ``tests/test_token_backend.py`` proves each fast backend gives the ids
(or counts) of its fallback.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path


def installed_release(package: str, verified: str) -> str | None:
    """The installed release of ``package`` (None when it is not installed): ``verified``
    when that release's metadata lies beside it, found without importing
    ``importlib.metadata`` (30 ms of a cold start); else what the metadata says."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    if (Path(spec.origin).parents[1] / f"{package}-{verified}.dist-info").is_dir():
        return verified
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:  # importable, but not installed (a source tree)
        return "unknown"
