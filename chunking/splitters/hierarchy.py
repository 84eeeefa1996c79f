"""Parent-child chunking: large parent chunks, each cut again into smaller children.

The usual retrieval set-up embeds the small chunks (precise matches) and hands the
model their parent (enough context). Every level is produced by the recursive splitter:
level 0 over the whole document with ``size``, and each deeper level inside each chunk
of the level above with the next size of ``child_sizes`` (``"auto"``, the default, is
one child level at a quarter of ``size``). Up to six levels in all.

All chunks come back in one list ordered by ``(start, level)``, so a parent comes
before its first child. Metadata:

- ``level``: 0 for the top level, 1 for the next size, and so on;
- ``parent``: the index, in the same list, of the smallest enclosing chunk (``None`` at
  level 0);
- ``children``: how many chunks have this one as their parent;
- ``level_size``: the size limit of its level; ``boundary`` as for the recursive splitter.

A chunk that already fits the next size would only have one child with the same text,
so that level is skipped below it: its children (if any) come from the size after, and
their ``level`` says which size cut them, so a child's level is below its parent's but
not always by one. The chunks without children (the leaves) cover the whole document.

``size`` is the top level's limit, the strategy's size limit: children are smaller by
construction. ``overlap`` applies between neighbouring chunks of the smallest size
within the same parent, never to the larger levels: if it did, two overlapping chunks
could both contain the same smaller chunk, and it would be emitted twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from ..engine.recursive import RecursiveSplitter, recursive_pieces
from ..model import Piece
from ..params import Param, Strategy, overlap_below_size, overlap_param, size_param, unit_param
from ..units import Sizer

#: Levels in all, the top one included.
MAX_LEVELS = 6
#: ``child_sizes`` value for one child level at a quarter of ``size``.
AUTO = "auto"


def parse_child_sizes(value: str, size: int) -> list[int]:
    """``"500,100"`` or ``"[500, 100]"`` as a list of ints; ``ValueError`` if malformed.

    ``"auto"`` is one child level at a quarter of ``size``.
    """
    text = value.strip()
    hint = 'give whole numbers, largest first, like "500" or "500,100", or "auto"'
    if text.lower() == AUTO:
        if size < 2:
            raise ValueError(f'child_sizes "auto" needs a size of at least 2; got {size}')
        return [max(1, size // 4)]
    if not text:
        raise ValueError(f"child_sizes is empty; {hint}")
    try:
        raw = json.loads(text) if text.startswith("[") else text.split(",")
    except json.JSONDecodeError:
        raise ValueError(f"child_sizes {value!r} is not a valid JSON list; {hint}") from None
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"child_sizes {value!r} is not a list of sizes; {hint}")
    sizes = []
    for item in raw:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise ValueError(f"child_sizes: {item!r} is not a whole number; {hint}")
        try:
            sizes.append(int(item.strip()) if isinstance(item, str) else item)
        except ValueError:
            raise ValueError(f"child_sizes: {item!r} is not a whole number; {hint}") from None
    return sizes


def level_sizes(params: Mapping[str, Any]) -> list[int]:
    """``[size, *child_sizes]``, validated: positive, strictly decreasing, not too many."""
    sizes = [params["size"], *parse_child_sizes(params["child_sizes"], params["size"])]
    if len(sizes) > MAX_LEVELS:
        raise ValueError(
            f"{len(sizes)} levels requested; at most {MAX_LEVELS} are supported "
            f"(size plus {MAX_LEVELS - 1} child sizes)"
        )
    for above, below in pairwise(sizes):
        if below < 1:
            raise ValueError(f"child_sizes must be positive; got {below}")
        if below >= above:
            raise ValueError(
                f"each child size must be smaller than the level above: {below} is not "
                f"smaller than {above}; list sizes largest first, below size ({sizes[0]})"
            )
    return sizes


def _check_levels(params: Mapping[str, Any]) -> None:
    smallest = level_sizes(params)[-1]
    if params["overlap"] >= smallest:
        raise ValueError(
            f"overlap ({params['overlap']}) must be smaller than the smallest child size "
            f"({smallest}); lower the overlap or raise child_sizes"
        )


@dataclass
class _Node:
    piece: Piece
    level: int
    parent: int | None  # position in the creation order
    children: int = 0


def _build(text: str, sizer: Sizer, sizes: list[int], overlap: int) -> list[_Node]:
    """Every chunk of every level, parents created before their children."""
    splitters = [
        RecursiveSplitter(text, sizer, size, overlap if level == len(sizes) - 1 else 0)
        for level, size in enumerate(sizes)
    ]
    nodes: list[_Node] = []

    def add(level: int, parent: int | None, lo: int, hi: int) -> None:
        pieces = [  # no chunk of whitespace alone (build_chunks would drop it, and the
            # parent positions below would point at the wrong chunks)
            p
            for p in recursive_pieces(text, sizer, splitters[level], lo, hi)
            if not text[p.start : p.end].isspace() and p.end > p.start
        ]
        if parent is not None and [(p.start, p.end) for p in pieces] == [(lo, hi)]:
            # the parent already fits this level: no copy of it, try the next size
            if level + 1 < len(sizes):
                add(level + 1, parent, lo, hi)
            return
        for piece in pieces:
            here = len(nodes)
            nodes.append(_Node(piece, level, parent))
            if parent is not None:
                nodes[parent].children += 1
            if level + 1 < len(sizes):
                add(level + 1, here, piece.start, piece.end)

    add(0, None, 0, len(text))
    return nodes


def hierarchy_pieces(text: str, sizer: Sizer, sizes: list[int], overlap: int) -> Iterator[Piece]:
    """The chunks of every level, ordered by (start, level), each knowing its parent."""
    nodes = _build(text, sizer, sizes, overlap)
    order = sorted(
        range(len(nodes)),
        key=lambda k: (nodes[k].piece.start, nodes[k].level, nodes[k].piece.end, k),
    )
    position = {k: pos for pos, k in enumerate(order)}
    for k in order:
        node = nodes[k]
        meta = {
            **node.piece.metadata,
            "level": node.level,
            "parent": None if node.parent is None else position[node.parent],
            "children": node.children,
            "level_size": sizes[node.level],
        }
        yield node.piece._replace(metadata=meta)


def _hierarchy(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return hierarchy_pieces(text, sizer, level_sizes(p), p["overlap"])


HIERARCHY = Strategy(
    "hierarchy",
    label="Parent-child",
    description="Large parent chunks, each cut again into smaller children (and "
    "grandchildren...), all by the recursive splitter. Every chunk records its level and "
    "the index of its parent: embed the children, return their parents.",
    params=(
        size_param(2000, "Size of the top-level (parent) chunks, in the chosen unit."),
        Param(
            "child_sizes",
            str,
            AUTO,
            "Sizes of the levels below the parents, largest first, comma-separated or as a "
            'JSON list: "500" for parents and children, "500,100" to add grandchildren. '
            'Each must be smaller than the level above. "auto": one child level at a '
            "quarter of size.",
        ),
        overlap_param(
            0,
            "How much neighbouring chunks of the smallest size (the last child size) "
            "share, in the chosen unit. Larger levels never overlap.",
        ),
        unit_param("chars"),
    ),
    checks=(overlap_below_size, _check_levels),
    split=_hierarchy,
)
