"""Chunk Explorer's core: cut documents into chunks with exact character offsets.

Every chunk is the slice of the text between its offsets:

    >>> import chunking
    >>> chunks = chunking.chunk("First paragraph.\\n\\nSecond one.", size=20)
    >>> [(c.start, c.end) for c in chunks]
    [(0, 16), (18, 29)]
"""

from .config import Config, get_strategy, register, strategies
from .core import build_chunks, check_text, chunk, run
from .model import UNSPLITTABLE, Chunk, Piece
from .params import Param, Strategy
from .units import UNITS, get_sizer

__all__ = [
    "UNITS",
    "UNSPLITTABLE",
    "Chunk",
    "Config",
    "Param",
    "Piece",
    "Strategy",
    "build_chunks",
    "check_text",
    "chunk",
    "get_sizer",
    "get_strategy",
    "register",
    "run",
    "strategies",
]
