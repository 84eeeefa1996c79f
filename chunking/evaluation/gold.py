"""Gold segmentations: the boundaries a person drew on a document, saved to score against.

A gold file is JSON::

    {
      "document": "long_essay.txt",
      "sha256": "<SHA-256 of the document text, UTF-8, hex>",
      "boundaries": [812, 1630, 2544],
      "unit": "chars",
      "note": "cut where the argument turns",
      "created": "2026-12-03T16:45:00+00:00"
    }

``boundaries`` are the sorted character offsets (Python string indices into the text)
where a segment starts, excluding 0; ``unit`` is always ``"chars"``. A gold file is
loaded *for* a document: when the text's hash differs from ``sha256`` it is refused,
since offsets into another text mean nothing.

Teachers can also write a segmentation by hand as a text file in which a line holding
only the marker (default ``<<<BOUNDARY>>>``; spaces around it and a ``\\r`` are allowed)
stands between two segments (:func:`parse_marked`). The document is that file with the
marker lines removed, each with its own line break and nothing else: the line break
before a marker stays at the end of the segment before it, and the next segment starts
at the first character of the line after the marker. Blank lines written around a marker
stay in the document. A marker before the first or after the last text line, or twice
in a row, separates nothing and adds no boundary.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import pairwise
from pathlib import Path
from typing import Any

DEFAULT_MARKER = "<<<BOUNDARY>>>"
UNIT = "chars"
#: The keys of a gold file, in the order they are written.
KEYS = ("document", "sha256", "boundaries", "unit", "note", "created")
_HEX = re.compile(r"[0-9a-f]{64}")


class GoldError(ValueError):
    """A gold segmentation that cannot be used; the message says what to do."""


def text_sha256(text: str) -> str:
    """The SHA-256 of ``text`` encoded as UTF-8, in hex: what a gold file is tied to."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def now() -> str:
    """The current time in UTC, ISO 8601 to the second (a gold file's ``created``)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Gold:
    """A gold segmentation of one document (see the module docstring for the format)."""

    document: str
    sha256: str
    boundaries: tuple[int, ...]
    note: str = ""
    created: str = ""
    unit: str = UNIT

    @classmethod
    def create(
        cls,
        text: str,
        document: str,
        boundaries: Iterable[int],
        *,
        note: str = "",
        created: str | None = None,
    ) -> Gold:
        """The gold segmentation of ``text`` (named ``document``) with these boundaries,
        sorted and without repeats; 0 is dropped (every text starts a segment)."""
        found = sorted({int(b) for b in boundaries} - {0})
        outside = [b for b in found if not 0 < b < len(text)]
        if outside:
            raise GoldError(
                f"boundary {outside[0]} is outside the document ({len(text):,} characters): "
                f"a boundary is an offset where a segment starts, from 1 to {len(text) - 1}"
            )
        return cls(
            document=document,
            sha256=text_sha256(text),
            boundaries=tuple(found),
            note=note,
            created=now() if created is None else created,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "document": self.document,
            "sha256": self.sha256,
            "boundaries": list(self.boundaries),
            "unit": self.unit,
            "note": self.note,
            "created": self.created,
        }

    def to_json(self) -> str:
        """The gold file's text: indented JSON with the boundaries on one line."""
        lines = [
            f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"
            for key, value in self.to_dict().items()
        ]
        return "{\n" + ",\n".join(lines) + "\n}\n"

    def check(self, text: str, name: str | None = None) -> None:
        """Refuse ``text`` (called ``name``) unless it is the text the boundaries were
        drawn on and every boundary lies inside it."""
        digest = text_sha256(text)
        if digest != self.sha256:
            which = f" {name}" if name else ""
            raise GoldError(
                f"the gold segmentation of {self.document!r} was drawn on another text: "
                f"its sha256 is {self.sha256[:12]}…, the document{which} has "
                f"{digest[:12]}…; load the document it was made for, or draw the "
                f"boundaries again"
            )
        if self.boundaries and self.boundaries[-1] >= len(text):
            raise GoldError(
                f"boundary {self.boundaries[-1]} is past the end of the document "
                f"({len(text):,} characters)"
            )


def parse_gold(data: str | bytes, source: str = "the gold file") -> Gold:
    """Read a gold file's JSON, checking its shape (not yet against a text)."""
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise GoldError(f"{source} is not valid JSON ({exc}); save it again from the app") from None
    if not isinstance(raw, dict):
        raise GoldError(f"{source} must hold a JSON object with the keys {', '.join(KEYS)}")
    missing = [key for key in ("document", "sha256", "boundaries") if key not in raw]
    if missing:
        raise GoldError(
            f"{source} has no {', '.join(repr(m) for m in missing)}; "
            f"a gold file has the keys {', '.join(KEYS)}"
        )
    for key in ("document", "sha256", "note", "created", "unit"):
        if key in raw and not isinstance(raw[key], str):
            raise GoldError(f"{source}: {key!r} must be a string, not {json.dumps(raw[key])}")
    unit = raw.get("unit", UNIT)
    if unit != UNIT:
        raise GoldError(f"{source}: unit {unit!r} is not supported; boundaries are in {UNIT!r}")
    if not _HEX.fullmatch(raw["sha256"]):
        raise GoldError(f"{source}: 'sha256' must be 64 lowercase hexadecimal digits")
    return Gold(
        document=raw["document"],
        sha256=raw["sha256"],
        boundaries=_boundaries(raw["boundaries"], source),
        note=raw.get("note", ""),
        created=raw.get("created", ""),
    )


def _boundaries(value: object, source: str) -> tuple[int, ...]:
    if not isinstance(value, list) or any(
        isinstance(b, bool) or not isinstance(b, int) for b in value
    ):
        raise GoldError(f"{source}: 'boundaries' must be a list of whole character offsets")
    for before, after in pairwise(value):
        if after <= before:
            raise GoldError(
                f"{source}: 'boundaries' must be sorted ascending without repeats "
                f"({after} comes after {before})"
            )
    if value and value[0] <= 0:
        raise GoldError(
            f"{source}: boundary {value[0]} is not a segment start; boundaries are offsets "
            f"from 1 (0, the start of the text, is left out)"
        )
    return tuple(value)


def load_gold(
    data: str | bytes, text: str, *, source: str = "the gold file", name: str | None = None
) -> Gold:
    """Parse a gold file and check it against ``text`` (the document called ``name``)."""
    gold = parse_gold(data, source)
    gold.check(text, name)
    return gold


def read_gold(path: str | Path, text: str, name: str | None = None) -> Gold:
    """:func:`load_gold` of the file at ``path``."""
    source = f"gold file {Path(path).name}"
    return load_gold(_read(path, source), text, source=source, name=name)


def _read(path: str | Path, source: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise GoldError(f"{source} was not found; check the path ({path})") from None
    except OSError as exc:
        raise GoldError(f"{source} cannot be read: {exc.strerror or exc}") from None


def is_marker_line(line: str, marker: str = DEFAULT_MARKER) -> bool:
    """Whether ``line`` (with or without its line break) holds only the marker."""
    return line.strip() == marker


def _lines(text: str) -> list[str]:
    """The lines of ``text``, each with its ``\\n`` (only ``\\n`` ends a line here)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return [line for line in lines if line]


def parse_marked(marked: str, marker: str = DEFAULT_MARKER) -> tuple[str, list[int]]:
    """The document and its boundaries from a text whose marker lines separate segments
    (see the module docstring for how line breaks are handled)."""
    if not marker.strip() or "\n" in marker or "\r" in marker:
        raise GoldError("the boundary marker must be some text on one line, such as <<<BOUNDARY>>>")
    marker = marker.strip()
    kept: list[str] = []
    cuts: list[int] = []
    length = 0
    for line in _lines(marked):
        if is_marker_line(line, marker):
            cuts.append(length)
            continue
        kept.append(line)
        length += len(line)
    text = "".join(kept)
    return text, sorted({c for c in cuts if 0 < c < len(text)})


def gold_from_marked(
    marked: str,
    document: str,
    *,
    marker: str = DEFAULT_MARKER,
    note: str = "",
    source: str = "the marked text",
) -> tuple[str, Gold]:
    """The document text and its gold segmentation from a marked text; a text without a
    single marker line is refused (the marker is probably another one)."""
    if not any(is_marker_line(line, marker.strip()) for line in _lines(marked)):
        raise GoldError(
            f"{source} has no line holding only the marker {marker!r}; put it on a line of "
            f"its own between two segments (or name your marker with --marker)"
        )
    text, boundaries = parse_marked(marked, marker)
    if not text.strip():
        raise GoldError(f"{source} holds only markers; write the segments between them")
    return text, Gold.create(text, document, boundaries, note=note)
