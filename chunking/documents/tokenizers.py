"""The user's own tokenizer files, kept on disk so that they can be a unit.

A ``tokenizer.json`` (Hugging Face) or ``.tiktoken`` file given as bytes (an upload) is
checked by loading it as a sizer (:func:`chunking.units.tokenizer_sizer`: the file is
only ever read as a tokenizer) and kept under ``~/.cache/chunk-explorer/tokenizers``,
named by the SHA-1 of its bytes, so that the same file is stored once. Its unit,
``tokenizer:PATH``, then works wherever a unit does (the app, the command line, a
saved configuration).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..units import TOKENIZER_PREFIX, tokenizer_sizer

#: The largest tokenizer file kept (a large model's tokenizer.json is about 10-20 MB).
TOKENIZER_MAX_BYTES = 50 * 1024 * 1024
#: The longest part of the file's own name kept in the stored name.
_STEM_CHARS = 40


def tokenizer_dir() -> Path:
    """``~/.cache/chunk-explorer/tokenizers`` (``$XDG_CACHE_HOME`` is honoured)."""
    from ..embedding.cache import default_cache_dir  # not at import: the core stays light

    return default_cache_dir().parent / "tokenizers"


def stored_name(data: bytes, name: str) -> str:
    """The file name ``data`` is kept under: the start of its SHA-1, then the letters,
    digits, dots and underscores of ``name``'s stem, then ``.tiktoken`` or ``.json``."""
    suffix = ".tiktoken" if name.endswith(".tiktoken") else ".json"
    stem = "".join(ch for ch in Path(name).stem if ch.isalnum() or ch in "._")[:_STEM_CHARS]
    digest = hashlib.sha1(data, usedforsecurity=False).hexdigest()[:12]
    return f"{digest}-{stem or 'tokenizer'}{suffix}"


def store_tokenizer(data: bytes, name: str, folder: Path | None = None) -> str:
    """Keep the tokenizer file ``name`` (its bytes ``data``) in ``folder`` (default
    :func:`tokenizer_dir`) and return its unit, ``tokenizer:PATH``.

    ``ValueError`` with a message for the user when the file is too large or is not a
    tokenizer; nothing is kept then.
    """
    if len(data) > TOKENIZER_MAX_BYTES:
        raise ValueError(f"{name} is over {TOKENIZER_MAX_BYTES // 2**20} MB; is it a tokenizer?")
    folder = folder or tokenizer_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / stored_name(data, name)
    path.write_bytes(data)
    try:
        tokenizer_sizer(path)
    except ValueError as exc:
        path.unlink(missing_ok=True)
        raise ValueError(f"{name}: {exc}") from None
    return f"{TOKENIZER_PREFIX}{path}"


#: What a page says when a unit names a tokenizer file that this app did not store: one
#: message whatever the path, so that a shared link cannot probe the server's files.
NOT_STORED = (
    "only a tokenizer uploaded to this app can be a unit here: upload the tokenizer.json "
    "or .tiktoken file under 'Count in your own tokenizer'"
)


def is_stored_unit(unit: str, folder: Path | None = None) -> bool:
    """Whether ``unit`` is a ``tokenizer:PATH`` unit naming a file that
    :func:`store_tokenizer` kept in ``folder`` (default :func:`tokenizer_dir`).

    The path is resolved (symlinks followed) before it is compared, and only a regular
    file directly in the folder, named as :func:`stored_name` names files, counts. Nothing
    is read: the answer is the same for a missing file and for one that is not a
    tokenizer, which is what a shared server needs.
    """
    if not unit.startswith(TOKENIZER_PREFIX):
        return False
    raw = unit[len(TOKENIZER_PREFIX) :].strip()
    if not raw:
        return False
    root = (folder or tokenizer_dir()).resolve()
    try:
        path = Path(raw).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return False
    name = path.name
    return (
        path.parent == root
        and path.suffix in (".json", ".tiktoken")
        and len(name) > 13
        and name[12] == "-"
        and all(ch in "0123456789abcdef" for ch in name[:12])
        and path.is_file()
    )


def check_app_unit(unit: str, folder: Path | None = None) -> str:
    """``unit`` itself when the app may use it: any unit that is not a tokenizer file, or
    a tokenizer this app stored (:func:`is_stored_unit`); ``ValueError`` with
    :data:`NOT_STORED` otherwise. The command line keeps its free paths and does not call
    this."""
    if unit.startswith(TOKENIZER_PREFIX) and not is_stored_unit(unit, folder):
        raise ValueError(NOT_STORED)
    return unit
