"""The built-in strategies, one module per family, in the order users see them.

Each module declares its strategies as :class:`~chunking.params.Strategy` records;
:data:`BUILT_IN` lists them explicitly and :mod:`chunking.config` registers them. A new
strategy is one module here and one entry in that list.
"""

from ..params import Strategy
from . import (
    cluster,
    code,
    conversation,
    hierarchy,
    html,
    markdown,
    propositions,
    recursive,
    sentences,
    table,
    windows,
)
from .semantic.strategy import SEMANTIC

BUILT_IN: tuple[Strategy, ...] = (
    recursive.RECURSIVE,
    windows.FIXED,
    windows.SLIDING,
    windows.TOKEN,
    markdown.MARKDOWN,
    html.HTML,
    table.TABLE,
    code.CODE,
    sentences.SENTENCE,
    sentences.PARAGRAPH,
    conversation.CONVERSATION,
    hierarchy.HIERARCHY,
    SEMANTIC,
    cluster.CLUSTER,
    propositions.PROPOSITIONS,
)
