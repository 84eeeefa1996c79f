"""Other libraries' chunkers as strategies: LangChain, LlamaIndex, chonkie, semchunk and
text-splitter, each run by the library's own code (the optional ``engines`` extra).

Registering them imports none of those libraries: each strategy imports its library
when it cuts a document, and a missing one gives a one-line message naming the extra.
Every chunk a library returns is checked against the source by :mod:`.align`: a
chunk's ``text`` is always the exact source slice; where the library reported a wrong
offset or changed the text, the chunk says so in ``flags``, with the library's own text
in ``library_text``.
"""

from __future__ import annotations

from ..params import Strategy
from . import chonkie, langchain, llamaindex, semchunk, text_splitter

#: In the order users see them, after the built-in strategies.
LIBRARIES: tuple[Strategy, ...] = (
    *langchain.STRATEGIES,
    *llamaindex.STRATEGIES,
    *chonkie.STRATEGIES,
    *semchunk.STRATEGIES,
    *text_splitter.STRATEGIES,
)
