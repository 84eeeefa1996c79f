"""Many documents at once: files, folders, globs and zips as one corpus (UI-free).

The app's Corpus page reads uploads with :func:`uploaded_members`; ``chunk-explorer run``
lists its inputs with :func:`list_sources` (nothing is read yet, so the total size is
known before the work starts) and reads each document with :func:`read_source`, so a
corpus of any size streams through memory one document at a time.

Untrusted archives are never extracted by name: a member name that is absolute or
climbs out with ``..`` is refused, symlinks and folders are skipped, and the limits of
:class:`CorpusLimits` are checked on the zip's central directory before anything is
decompressed and again on the bytes actually read, so a header that lies about a
member's size cannot make a small zip fill the memory.

Every refusal is a :class:`CorpusError` (a ``ValueError``) naming the limit and the file.
"""

from __future__ import annotations

import glob
import hashlib
import io
import os
import stat
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from .io import MAX_BYTES_DEFAULT, format_size


class CorpusError(ValueError):
    """A corpus that is refused as a whole; one sentence: which limit, which file."""


@dataclass(frozen=True)
class CorpusLimits:
    """How much one corpus may hold; the defaults suit an upload to the app."""

    max_files: int = 1000
    #: Uncompressed bytes of every document together.
    max_total_bytes: int = 200 * 2**20
    #: Bytes of one document (the same default as a single upload).
    max_file_bytes: int = MAX_BYTES_DEFAULT
    #: Uncompressed over compressed size, for each zip member and for the whole zip.
    max_ratio: float = 100.0


@dataclass(frozen=True)
class Member:
    """One document of a corpus and its raw bytes."""

    #: Relative POSIX path, normalised ("docs/a.md"); never absolute, never with "..".
    name: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class Source:
    """One document to read later: a file on disk, or a member of a zip on disk."""

    #: The document's name in the corpus, as in :attr:`Member.name`.
    name: str
    #: The file itself, or the zip holding it.
    path: str
    #: Uncompressed size in bytes, as the file system or the zip directory says.
    size: int
    #: The member's name inside the zip at ``path``; None for a plain file.
    member: str | None = None


def doc_id(data: bytes) -> str:
    """The content hash that identifies a document: first 16 hex digits of its SHA-256."""
    return hashlib.sha256(data).hexdigest()[:16]


# ------------------------------------------------------------------------- budget


class _Budget:
    """Counts files and bytes against the limits across every input of one corpus."""

    def __init__(self, limits: CorpusLimits) -> None:
        self.limits = limits
        self.files = 0
        self.bytes = 0

    def add(self, name: str, size: int) -> None:
        self.files += 1
        self.bytes += size
        limits = self.limits
        if self.files > limits.max_files:
            raise CorpusError(
                f"the corpus has more than {limits.max_files:,} files (at {name}); "
                "split it into smaller corpora"
            )
        if self.bytes > limits.max_total_bytes:
            raise CorpusError(
                f"the corpus is over the {format_size(limits.max_total_bytes)} limit on its "
                f"total size (at {name}); split it into smaller corpora"
            )


# ---------------------------------------------------------------------------- zips


def _safe_member_name(raw: str, archive: str) -> str:
    """``raw`` as a normalised relative POSIX path; CorpusError if it could escape."""
    name = raw.replace("\\", "/")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if name.startswith("/") or (parts and ":" in parts[0]) or ".." in parts:
        raise CorpusError(
            f"{archive} contains the member {raw!r}, whose path leaves the archive; "
            "refusing the whole zip"
        )
    return "/".join(parts)


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def _is_hidden(name: str) -> bool:
    """Dot files, dot folders and Python caches; macOS adds ``__MACOSX/`` to zips."""
    return any(p.startswith(".") or p in ("__MACOSX", "__pycache__") for p in name.split("/"))


def _check_ratio(size: int, compressed: int, what: str, limits: CorpusLimits) -> None:
    if size > limits.max_ratio * max(compressed, 1):
        raise CorpusError(
            f"{what} expands {size / max(compressed, 1):,.0f} times (limit "
            f"{limits.max_ratio:g}); it looks like a zip bomb, refusing it"
        )


def _zip_entries(
    archive: zipfile.ZipFile, label: str, limits: CorpusLimits
) -> list[tuple[zipfile.ZipInfo, str]]:
    """The documents of a zip with their safe names, every limit checked on the
    central directory; nothing is decompressed."""
    entries = []
    for info in archive.infolist():
        name = _safe_member_name(info.filename, label)
        if info.is_dir() or _is_symlink(info) or not name or _is_hidden(name):
            continue
        _check_ratio(info.file_size, info.compress_size, f"{label}: {name}", limits)
        entries.append((info, name))
    size = sum(info.file_size for info, _ in entries)
    _check_ratio(size, sum(info.compress_size for info, _ in entries), label, limits)
    return entries


def _read_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, limits: CorpusLimits
) -> bytes:
    """The member's bytes, never more than the limit and the size its header declares."""
    if info.file_size > limits.max_file_bytes:
        raise CorpusError(_too_big(name, info.file_size, limits))
    try:
        with archive.open(info) as handle:
            data = handle.read(info.file_size + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise CorpusError(f"{name} is damaged in its zip ({exc})") from None
    if len(data) != info.file_size:
        raise CorpusError(f"{name}: its zip header declares {info.file_size:,} bytes, not so")
    return data


def _open_zip(data: bytes | BinaryIO | str, label: str) -> zipfile.ZipFile:
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    try:
        return zipfile.ZipFile(source)
    except (zipfile.BadZipFile, EOFError) as exc:
        raise CorpusError(f"{label} is not a valid zip file ({exc})") from None


def zip_members(
    data: bytes | BinaryIO, limits: CorpusLimits = CorpusLimits(), *, label: str = "the zip"
) -> Iterator[Member]:
    """Members of a zip, streamed: directories, symlinks and hidden files skipped; a name
    that is absolute or escapes with ``..`` raises CorpusError (never extracted to disk);
    limits checked from the central directory before reading and again while reading
    (a lying header cannot bomb)."""
    yield from _zip_members(data, _Budget(limits), label)


def _zip_members(data: bytes | BinaryIO, budget: _Budget, label: str) -> Iterator[Member]:
    with _open_zip(data, label) as archive:
        entries = _zip_entries(archive, label, budget.limits)
        for info, name in entries:
            budget.add(name, info.file_size)
        for info, name in entries:
            yield Member(name, _read_member(archive, info, name, budget.limits))


def uploaded_members(
    files: Iterable[tuple[str, bytes]], limits: CorpusLimits = CorpusLimits()
) -> Iterator[Member]:
    """Several uploaded files and/or zips (a name ending .zip is expanded) under the
    same limits, counted over all of them together."""
    budget = _Budget(limits)
    for raw_name, data in files:
        name = PurePosixPath(raw_name.replace("\\", "/")).name or "upload"
        if name.lower().endswith(".zip"):
            yield from _zip_members(data, budget, name)
            continue
        if len(data) > limits.max_file_bytes:
            raise CorpusError(_too_big(name, len(data), limits))
        budget.add(name, len(data))
        yield Member(name, data)


def _too_big(name: str, size: int, limits: CorpusLimits) -> str:
    return (
        f"{name} is {format_size(size)}, over the {format_size(limits.max_file_bytes)} "
        "limit for one document"
    )


# ------------------------------------------------------------------------ CLI inputs


def expand_inputs(inputs: Sequence[str], limits: CorpusLimits = CorpusLimits()) -> Iterator[Member]:
    """CLI inputs: files, folders (recursive, sorted, hidden files skipped), globs, zips.

    A missing path or a glob matching nothing raises CorpusError; an empty folder raises
    CorpusError ("... no files"); so does a file that cannot be read (use
    :func:`list_sources` and :func:`read_source` to carry on past it).
    """
    for source in list_sources(inputs, limits):
        try:
            yield Member(source.name, read_source(source, limits))
        except OSError as exc:
            raise CorpusError(f"{source.name} cannot be read: {exc.strerror or exc}") from None


def list_sources(inputs: Sequence[str], limits: CorpusLimits = CorpusLimits()) -> list[Source]:
    """Every document the inputs name, in order, without reading any of them (a zip's
    directory is read and checked). The same file named twice is listed once."""
    if not inputs:
        raise CorpusError("no input: name files, folders, globs or zips")
    budget = _Budget(limits)
    sources: list[Source] = []
    seen: set[tuple[str, str | None]] = set()
    for given in inputs:
        for source in _input_sources(given, limits):
            key = (os.path.realpath(source.path), source.member)
            if key not in seen:
                seen.add(key)
                budget.add(source.name, source.size)
                sources.append(source)
    return sources


def read_source(source: Source, limits: CorpusLimits = CorpusLimits()) -> bytes:
    """The bytes of one listed document; CorpusError over the per-document limit,
    OSError when the file cannot be read."""
    if source.member is None:
        with open(source.path, "rb") as handle:
            data = handle.read(limits.max_file_bytes + 1)
        if len(data) > limits.max_file_bytes:
            raise CorpusError(_too_big(source.name, os.stat(source.path).st_size, limits))
        return data
    with _open_zip(source.path, source.path) as archive:
        return _read_member(archive, archive.getinfo(source.member), source.name, limits)


def _input_sources(given: str, limits: CorpusLimits) -> list[Source]:
    path = Path(given)
    if path.is_dir():
        return _folder_sources(path, limits)
    if path.is_file():
        return _file_sources(path, path.name, limits)
    if glob.has_magic(given):
        matches = sorted(glob.glob(given, recursive=True))
        if not matches:
            raise CorpusError(f"the pattern {given} matches no file")
        return [s for match in matches for s in _input_sources(match, limits)]
    raise CorpusError(f"{given} was not found; check the path")


def _file_sources(path: Path, name: str, limits: CorpusLimits) -> list[Source]:
    """A plain file, or every member of a zip (named ``<zip name>/<member>``)."""
    if path.suffix.lower() != ".zip":
        return [Source(name, str(path), _size(path))]
    with _open_zip(str(path), name) as archive:
        entries = _zip_entries(archive, name, limits)
    return [
        Source(f"{name}/{member}", str(path), info.file_size, info.filename)
        for info, member in entries
    ]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # reading it will say what is wrong


def _folder_sources(folder: Path, limits: CorpusLimits) -> list[Source]:
    """Files under ``folder``, sorted, named from the folder's own name down; hidden
    files and folders, and symlinks (which could lead anywhere), are skipped."""
    label = folder.resolve().name or "corpus"
    sources: list[Source] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _is_hidden(d) and not Path(root, d).is_symlink())
        for file in sorted(files):
            path = Path(root, file)
            if _is_hidden(file) or path.is_symlink():
                continue
            relative = path.relative_to(folder).as_posix()
            sources += _file_sources(path, f"{label}/{relative}", limits)
    if not sources:
        raise CorpusError(f"the folder {folder} has no files (hidden files are skipped)")
    return sorted(sources, key=lambda s: s.name)
