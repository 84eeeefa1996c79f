"""Where the app may write: one data folder, so that a shared server writes only there.

The command line writes wherever its user points it. The app is different: a page (or a
link someone shared) types a folder for a vector database, and the server would write
wherever that text points. Every app-side output therefore goes below one folder,
``$CHUNK_EXPLORER_DATA_DIR`` (default ``~/.cache/chunk-explorer/data``), and
:func:`inside_data_dir` turns what was typed into a path below it, refusing absolute
paths, ``..`` and symlinks that lead out, in one line a user can act on.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

#: Environment variable: the one folder the app writes its outputs below.
DATA_DIR_ENV = "CHUNK_EXPLORER_DATA_DIR"


def data_dir() -> Path:
    """``$CHUNK_EXPLORER_DATA_DIR``, or ``~/.cache/chunk-explorer/data`` (``$XDG_CACHE_HOME``
    is honoured)."""
    configured = os.environ.get(DATA_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    from ..embedding.cache import default_cache_dir  # not at import: the core stays light

    return default_cache_dir().parent / "data"


def inside_data_dir(typed: str, root: Path | None = None) -> Path:
    """The folder ``typed`` names below ``root`` (default :func:`data_dir`), resolved.

    ``ValueError`` with one line for an empty name, an absolute path (POSIX or Windows
    style), a ``..`` part, or a name that resolves outside ``root`` (a symlink leading
    out). Nothing is created.
    """
    base = (root or data_dir()).expanduser().resolve()
    name = typed.strip()
    where = f"folders are kept below {base}"
    if not name:
        raise ValueError(f"type a folder name ({where})")
    if (
        PurePosixPath(name).is_absolute()
        or PureWindowsPath(name).is_absolute()
        or PureWindowsPath(name).drive
        or name.startswith("~")
    ):
        raise ValueError(f"{name!r}: give a folder name, not an absolute path ({where})")
    parts = [part for part in PureWindowsPath(name).parts if part != "."]  # / and \ both
    if ".." in parts:
        raise ValueError(f"{name!r}: '..' is not allowed in a folder name ({where})")
    if not parts:
        raise ValueError(f"{name!r}: give the name of a folder inside the data folder ({where})")
    try:
        path = (base / Path(*parts)).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        raise ValueError(f"{name!r}: that folder cannot be used ({where})") from None
    if base not in path.parents:
        raise ValueError(f"{name!r} leads outside the data folder ({where})")
    return path
