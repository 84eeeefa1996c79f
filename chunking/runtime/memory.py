"""How the app's server process asks glibc to keep its memory compact
(:func:`limit_malloc_arenas`).

A Streamlit server runs every session's script in a thread of its own. glibc's malloc
gives each new thread's allocations an arena of their own, up to eight per CPU, and
memory freed in one arena is not reused by the others: a server whose sessions come and
go for hours holds more and more resident memory that no cache owns. Capping the arenas
(the ``M_ARENA_MAX`` setting, also read from the ``MALLOC_ARENA_MAX`` environment
variable at process start) lets the threads share a few arenas and reuse what was freed.
Python's own small-object allocator is not affected; only the larger blocks (document
texts, numpy arrays, tokenizer buffers) go through malloc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

#: mallopt's parameter number for the arena cap (glibc's malloc.h).
M_ARENA_MAX = -8
#: The arenas the server keeps: one for the main thread, one shared by the sessions.
SERVER_ARENAS = 2
#: The environment variable glibc reads; a value set there is left as it is.
ARENA_ENV = "MALLOC_ARENA_MAX"


def limit_malloc_arenas(arenas: int = SERVER_ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``arenas`` for this process, before its threads
    start; True when the cap was set, False where there is no glibc (macOS, musl,
    Windows) or the user set ``MALLOC_ARENA_MAX`` (theirs is kept)."""
    if arenas < 1:
        raise ValueError(f"arenas must be at least 1, got {arenas}")
    if os.environ.get(ARENA_ENV):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, arenas))
